/**
 * What a store event is worth to a webhook receiver: zero or more payloads
 * of the 17 kinds. Pure: the same event and device state give the same
 * payload (and `event_id`) on every replay, rebuild and redelivery.
 *
 * - `position.updated`: every fix the history keeps (plausible ones).
 * - `device.online` / `device.offline`: transitions of the device's status
 *   as the devices read model decides them (a replaced connection is no
 *   transition).
 * - every `DeviceEventRaised` (detections, device alarms, geofence
 *   crossings) under the `event_id` that `GET /v1/events` and the feed show.
 */
import type { EventKind } from '../../core/alarms.js';
import type { RecordedEvent } from '../../core/event-store/port.js';
import type { DeviceEventRaised, PositionRecorded } from '../../core/events.js';
import { deviceEventId } from '../device-events.js';
import type { DeviceRow } from '../devices/evolve.js';
import { isPlausibleFix } from '../usable-fix.js';

export interface WebhookPosition {
  lat: number;
  lng: number;
  speed_kmh: number | null;
  timestamp: string;
}

export interface WebhookPayload {
  event: EventKind;
  event_id: string;
  occurred_at: string;
  /** The event's place in the log: increases per device, identical on replays. */
  sequence: number;
  device_id: string;
  device_name: string | null;
  driver_id: string | null;
  severity: DeviceEventRaised['data']['severity'];
  position: WebhookPosition | null;
  [field: string]: unknown;
}

/** A payload with what delivery needs beside it. */
export interface WebhookMessage {
  customer_id: string;
  device_id: string;
  occurred_at: number;
  payload: WebhookPayload;
}

const iso = (ms: number) => new Date(ms).toISOString();

function positionOf(d: PositionRecorded['data']): WebhookPosition {
  return { lat: d.lat, lng: d.lng, speed_kmh: d.speed_kmh, timestamp: iso(d.fix_time) };
}

/**
 * The payloads `event` produces. `before`/`after` are the device's read-model
 * row around the event (only connectivity events look at them).
 */
export function webhookMessages(event: RecordedEvent, before: DeviceRow | null, after: DeviceRow | null): WebhookMessage[] {
  const sequence = Number(event.position.commit);
  switch (event.type) {
    case 'PositionRecorded': {
      const d = event.data;
      if (!isPlausibleFix(d)) return [];
      return [
        message(d.customer_id, d.device_id, d.fix_time, {
          event: 'position.updated',
          event_id: deviceEventId(d.fix_time, `position:${event.id}`),
          occurred_at: iso(d.fix_time),
          sequence,
          device_id: d.device_id,
          device_name: after?.name ?? null,
          driver_id: after?.driver_id ?? null,
          severity: 'info',
          position: positionOf(d),
          heading_deg: d.heading_deg,
          altitude_m: d.altitude_m,
          satellites: d.satellites,
          ignition: d.ignition,
          valid: d.valid,
        }),
      ];
    }
    case 'DeviceConnected': {
      if (!after || before?.status === 'online' || after.status !== 'online') return [];
      const d = event.data;
      return [
        message(d.customer_id, d.device_id, d.at, {
          event: 'device.online',
          event_id: deviceEventId(d.at, `online:${event.id}`),
          occurred_at: iso(d.at),
          sequence,
          device_id: d.device_id,
          device_name: after.name,
          driver_id: after.driver_id,
          severity: 'info',
          position: null,
          protocol: d.protocol,
        }),
      ];
    }
    case 'DeviceDisconnected': {
      if (!after || before?.status !== 'online' || after.status !== 'offline') return [];
      const d = event.data;
      return [
        message(d.customer_id, d.device_id, d.at, {
          event: 'device.offline',
          event_id: deviceEventId(d.at, `offline:${event.id}`),
          occurred_at: iso(d.at),
          sequence,
          device_id: d.device_id,
          device_name: after.name,
          driver_id: after.driver_id,
          severity: 'low',
          position: null,
          last_seen_at: iso(d.last_seen_at),
          reason: d.reason,
        }),
      ];
    }
    case 'DeviceEventRaised': {
      const d = event.data;
      return [
        message(d.customer_id, d.device_id, d.occurred_at, {
          ...d.fields,
          event: d.kind,
          event_id: d.event_id,
          occurred_at: iso(d.occurred_at),
          sequence,
          device_id: d.device_id,
          device_name: after?.name ?? null,
          driver_id: d.driver_id,
          severity: d.severity,
          position: d.position ? { lat: d.position.lat, lng: d.position.lng, speed_kmh: d.position.speed_kmh, timestamp: iso(d.position.timestamp) } : null,
        }),
      ];
    }
    default:
      return [];
  }
}

function message(customerId: string, deviceId: string, occurredAt: number, payload: WebhookPayload): WebhookMessage {
  return { customer_id: customerId, device_id: deviceId, occurred_at: occurredAt, payload };
}
