/**
 * Telemetry and raised events appended straight to the store, for API tests
 * that need positions and events of a registered device without a gateway.
 * The builders give one event with plain defaults, any value overridable; the
 * append helpers store one and resolve, once the read models hold it, with its
 * log position (or the `evt_…` id of a raised event).
 */
import type { EventToAppend, LogPosition } from '../../core/event-store/port.js';
import type { AlarmReported, DeviceEventRaised, DomainEvent, PositionRecorded } from '../../core/events.js';
import { deviceEventId, randomUuid } from '../../core/ids.js';
import { streams } from '../../core/streams.js';
import type { ApiHarness } from './api-harness.js';

export interface DeviceRef {
  customerId: string;
  deviceId: string;
}

type Fix = PositionRecorded['data'];
type Alarm = AlarmReported['data'];
type Raised = DeviceEventRaised['data'];

/** A valid, slow fix at `t`, received 400 ms later (slow so that no detector raises an event of its own). */
export function positionRecorded(device: DeviceRef, t: number, fix: Partial<Fix> = {}): EventToAppend<PositionRecorded> {
  return {
    id: randomUuid(),
    type: 'PositionRecorded',
    data: {
      device_id: device.deviceId, customer_id: device.customerId, protocol: 'teltonika', fix_time: t, received_at: t + 400,
      valid: true, lat: 56.95, lng: 24.1, speed_kmh: 3, heading_deg: 90, altitude_m: 10, satellites: 9, ignition: true,
      odometer_m: null, attributes: {}, ...fix,
    },
  };
}

/** An alarm the device reported at `t`, received 400 ms later, standing still where positionRecorded puts it. */
export function alarmReported(device: DeviceRef, t: number, kind: Alarm['kind'], alarm: Partial<Alarm> = {}): EventToAppend<AlarmReported> {
  return {
    id: randomUuid(),
    type: 'AlarmReported',
    data: {
      device_id: device.deviceId, customer_id: device.customerId, protocol: 'teltonika', kind, occurred_at: t, received_at: t + 400,
      level: null, position: { lat: 56.95, lng: 24.1, speed_kmh: 0, heading_deg: 0 }, details: {}, ...alarm,
    },
  };
}

async function appendAndWait(h: ApiHarness, stream: string, event: EventToAppend<DomainEvent>): Promise<LogPosition> {
  const { position } = await h.store.appendToStream(stream, [event]);
  await h.waitFor(position);
  return position;
}

/** Stores positionRecorded(device, t, fix). */
export function recordPosition(h: ApiHarness, device: DeviceRef, t: number, fix: Partial<Fix> = {}): Promise<LogPosition> {
  return appendAndWait(h, streams.telemetry(device.deviceId), positionRecorded(device, t, fix));
}

/** Stores alarmReported(device, t, kind, alarm); the detectors raise their event from it afterwards, through the store. */
export function reportAlarm(h: ApiHarness, device: DeviceRef, t: number, kind: Alarm['kind'], alarm: Partial<Alarm> = {}): Promise<LogPosition> {
  return appendAndWait(h, streams.telemetry(device.deviceId), alarmReported(device, t, kind, alarm));
}

/** An event of the device at `t`, as a detector would raise it (no driver, from the device, where it stood); returns its `evt_…` id. */
export async function raiseDeviceEvent(
  h: ApiHarness, device: DeviceRef, t: number, event: Pick<Raised, 'kind' | 'severity'> & Partial<Raised>,
): Promise<string> {
  const data: Raised = {
    event_id: deviceEventId(t, randomUuid()), customer_id: device.customerId, device_id: device.deviceId, driver_id: null, occurred_at: t, source: 'device',
    position: { lat: 56.95, lng: 24.1, speed_kmh: 0, heading_deg: 0, timestamp: t }, fields: {}, context: {}, media: [], ...event,
  };
  await appendAndWait(h, streams.deviceEvents(device.deviceId), { id: randomUuid(), type: 'DeviceEventRaised', data });
  return data.event_id;
}

/** An SOS of the device at `t`; returns its `evt_…` id. */
export function raiseSos(h: ApiHarness, device: DeviceRef, t: number): Promise<string> {
  return raiseDeviceEvent(h, device, t, { kind: 'event.sos', severity: 'critical' });
}
