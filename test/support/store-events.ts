/**
 * Telemetry and raised events appended straight to the store, for API tests
 * that need positions and events of a registered device without a gateway.
 * Each helper waits until the read models hold what it appended.
 */
import { newId, randomUuid } from '../../core/ids.js';
import { streams } from '../../core/streams.js';
import type { ApiHarness } from './api-harness.js';

export interface DeviceRef {
  customerId: string;
  deviceId: string;
}

/** A valid, slow fix at `t` (slow so that no detector raises an event of its own). */
export async function recordPosition(h: ApiHarness, device: DeviceRef, t: number, lat = 56.95): Promise<void> {
  const res = await h.store.appendToStream(streams.telemetry(device.deviceId), [
    {
      id: randomUuid(),
      type: 'PositionRecorded',
      data: {
        device_id: device.deviceId, customer_id: device.customerId, protocol: 'teltonika', fix_time: t, received_at: t + 400,
        valid: true, lat, lng: 24.1, speed_kmh: 3, heading_deg: 90, altitude_m: 10, satellites: 9, ignition: true,
        odometer_m: null, attributes: {},
      },
    },
  ]);
  await h.runner.waitFor(res.position);
}

/** An SOS of the device at `t`, as a detector would raise it; returns its `evt_…` id. */
export async function raiseSos(h: ApiHarness, device: DeviceRef, t: number): Promise<string> {
  const eventId = newId('evt', t);
  const res = await h.store.appendToStream(streams.deviceEvents(device.deviceId), [
    {
      id: randomUuid(),
      type: 'DeviceEventRaised',
      data: {
        event_id: eventId, kind: 'event.sos', customer_id: device.customerId, device_id: device.deviceId, driver_id: null,
        occurred_at: t, severity: 'critical', source: 'device',
        position: { lat: 56.95, lng: 24.1, speed_kmh: 0, heading_deg: 0, timestamp: t },
        fields: {}, context: {}, media: [],
      },
    },
  ]);
  await h.runner.waitFor(res.position);
  return eventId;
}
