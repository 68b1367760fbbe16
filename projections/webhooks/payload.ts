/**
 * What a store event is worth to a webhook receiver: zero or more payloads
 * of the 24 kinds. Pure: the same event and device state give the same
 * payload (and `event_id`) on every replay, rebuild and redelivery.
 *
 * - `position.updated`: every fix the history keeps (plausible ones).
 * - `device.online` / `device.offline`: transitions of the device's status
 *   as the devices read model decides them (a replaced connection is no
 *   transition).
 * - every `DeviceEventRaised` (detections, device alarms, geofence
 *   crossings) under the `event_id` that `GET /v1/events` and the feed show.
 * - `command.sent` / `succeeded` / `failed` / `expired`: the command as the
 *   event left it (`command`, as GET /v1/commands/{id} shows it).
 */
import type { EventKind } from '../../core/alarms.js';
import type { RecordedEvent } from '../../core/event-store/port.js';
import { commandEventId, commandView, publishedCommandKind } from '../../core/command-view.js';
import type { DeviceCommandEvent, DeviceEventRaised } from '../../core/events.js';
import { deviceEventId } from '../../core/ids.js';
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

/** Builds a payload from the fields every kind carries, then the kind's own. */
type MessageOf = (
  d: { customer_id: string; device_id: string },
  kind: EventKind,
  eventId: string,
  occurredAt: number,
  common: Pick<WebhookPayload, 'driver_id' | 'severity' | 'position'>,
  own: Record<string, unknown>,
) => WebhookMessage[];

/**
 * The payloads `event` produces. `before`/`after` are the device's read-model
 * row around the event (only connectivity events look at them).
 */
export function webhookMessages(event: RecordedEvent, before: DeviceRow | null, after: DeviceRow | null): WebhookMessage[] {
  const sequence = Number(event.position.commit);
  /** The fields every kind carries, then the kind's own. */
  const message: MessageOf = (d, kind, eventId, occurredAt, common, own) => [
    {
      customer_id: d.customer_id,
      device_id: d.device_id,
      occurred_at: occurredAt,
      payload: {
        ...own,
        event: kind,
        event_id: eventId,
        occurred_at: iso(occurredAt),
        sequence,
        device_id: d.device_id,
        device_name: after?.name ?? null,
        ...common,
      },
    },
  ];
  switch (event.type) {
    case 'PositionRecorded': {
      const d = event.data;
      if (!isPlausibleFix(d)) return [];
      // Nearly every payload is this one: one literal, in the key order `message` gives the others.
      const at = iso(d.fix_time);
      const payload: WebhookPayload = {
        heading_deg: d.heading_deg,
        altitude_m: d.altitude_m,
        satellites: d.satellites,
        ignition: d.ignition,
        valid: d.valid,
        event: 'position.updated',
        event_id: deviceEventId(d.fix_time, `position:${event.id}`),
        occurred_at: at,
        sequence,
        device_id: d.device_id,
        device_name: after?.name ?? null,
        driver_id: after?.driver_id ?? null,
        severity: 'info',
        position: { lat: d.lat, lng: d.lng, speed_kmh: d.speed_kmh, timestamp: at },
      };
      return [{ customer_id: d.customer_id, device_id: d.device_id, occurred_at: d.fix_time, payload }];
    }
    case 'DeviceConnected': {
      if (!after || before?.status === 'online' || after.status !== 'online') return [];
      const d = event.data;
      return message(d, 'device.online', deviceEventId(d.at, `online:${event.id}`), d.at,
        { driver_id: after.driver_id, severity: 'info', position: null },
        { protocol: d.protocol });
    }
    case 'DeviceDisconnected': {
      if (!after || before?.status !== 'online' || after.status !== 'offline') return [];
      const d = event.data;
      return message(d, 'device.offline', deviceEventId(d.at, `offline:${event.id}`), d.at,
        { driver_id: after.driver_id, severity: 'low', position: null },
        { last_seen_at: iso(d.last_seen_at), reason: d.reason });
    }
    case 'DeviceEventRaised': {
      const d = event.data;
      const p = d.position;
      return message(d, d.kind, d.event_id, d.occurred_at,
        { driver_id: d.driver_id, severity: d.severity, position: p ? { lat: p.lat, lng: p.lng, speed_kmh: p.speed_kmh, timestamp: iso(p.timestamp) } : null },
        d.fields);
    }
    case 'DeviceCommandSent':
    case 'DeviceCommandSucceeded':
    case 'DeviceCommandFailed':
    case 'DeviceCommandExpired':
      return commandMessage(event as RecordedEvent<DeviceCommandEvent>, after, message);
    default:
      return [];
  }
}

/** A published command event's payload; `device` gives the driver at the time. */
function commandMessage(event: RecordedEvent<DeviceCommandEvent>, device: DeviceRow | null, message: MessageOf): WebhookMessage[] {
  const kind = publishedCommandKind(event.type);
  if (!kind) return [];
  const d = event.data;
  const severity = kind === 'command.failed' || kind === 'command.expired' ? 'low' : 'info';
  return message(d, kind, commandEventId(kind, d.at, event.id), d.at, { driver_id: device?.driver_id ?? null, severity, position: null }, { command: commandView(d.command) });
}
