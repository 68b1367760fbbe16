/**
 * Webhook payloads (docs/api-decisions.md, "Webhooks"), one TypeBox schema per payload
 * family. They document what the webhook projector sends, under the OpenAPI
 * document's `webhooks`; the projector's tests can validate against them.
 */
import { Type, type TObject, type TProperties } from '@sinclair/typebox';
import type { EventKind } from '../../core/alarms.js';
import { Nullable, Timestamp } from './common.js';

export const Severity = Type.Union(
  [Type.Literal('info'), Type.Literal('low'), Type.Literal('medium'), Type.Literal('high'), Type.Literal('critical')],
  { description: 'SOS and collision critical; fatigue high; harsh events by |delta_kmh|; the rest info (device.offline low)' },
);

export const WebhookPosition = Type.Object({
  lat: Type.Number(),
  lng: Type.Number(),
  speed_kmh: Nullable(Type.Number()),
  timestamp: Timestamp,
});

/** Fields every payload carries; `event` is narrowed to the family's kinds. */
function payload(kinds: readonly EventKind[], extra: TProperties, description: string): TObject {
  return Type.Object(
    {
      event: Type.Unsafe<string>({ type: 'string', enum: [...kinds] }),
      event_id: Type.String({ description: 'Stable across retries and replays' }),
      occurred_at: Timestamp,
      sequence: Type.Integer({ description: 'Increases per device, so receivers can order and de-duplicate' }),
      device_id: Type.String(),
      device_name: Nullable(Type.String()),
      driver_id: Nullable(Type.String()),
      severity: Severity,
      position: Nullable(WebhookPosition),
      ...extra,
    },
    { description },
  );
}

export interface WebhookFamily {
  /** Component schema name. */
  name: string;
  kinds: readonly EventKind[];
  schema: TObject;
}

export const WEBHOOK_FAMILIES: readonly WebhookFamily[] = [
  { name: 'PositionUpdatedPayload', kinds: ['position.updated'], schema: payload(['position.updated'], {}, 'A new position') },
  {
    name: 'DeviceOnlinePayload',
    kinds: ['device.online'],
    schema: payload(['device.online'], { protocol: Type.String({ description: 'teltonika, gt06 or jt808' }) }, 'A device connected'),
  },
  {
    name: 'DeviceOfflinePayload',
    kinds: ['device.offline'],
    schema: payload(
      ['device.offline'],
      { last_seen_at: Timestamp, reason: Type.String({ description: 'closed, idle_timeout, ...' }) },
      'A device went offline',
    ),
  },
  {
    name: 'GeofenceEnterPayload',
    kinds: ['geofence.enter'],
    schema: payload(['geofence.enter'], { geofence_id: Type.String(), geofence_name: Type.String() }, 'A device entered a geofence'),
  },
  {
    name: 'GeofenceExitPayload',
    kinds: ['geofence.exit'],
    schema: payload(
      ['geofence.exit'],
      { geofence_id: Type.String(), geofence_name: Type.String(), dwell_s: Type.Number({ description: 'Time spent inside' }) },
      'A device left a geofence',
    ),
  },
  {
    name: 'HarshDrivingPayload',
    kinds: ['event.harsh_brake', 'event.acceleration', 'event.curve'],
    schema: payload(
      ['event.harsh_brake', 'event.acceleration', 'event.curve'],
      { delta_kmh: Type.Number({ description: 'Signed speed change' }), duration_ms: Nullable(Type.Integer()) },
      'Harsh braking, acceleration or cornering',
    ),
  },
  {
    name: 'OverspeedPayload',
    kinds: ['event.overspeed'],
    schema: payload(
      ['event.overspeed'],
      { limit_kmh: Type.Number(), delta_kmh: Type.Number({ description: 'Speed minus the limit' }) },
      'Speed above the limit',
    ),
  },
  {
    name: 'DeviceEventPayload',
    kinds: ['event.sos', 'event.ignition_on'],
    schema: payload(['event.sos', 'event.ignition_on'], {}, 'SOS button or ignition on'),
  },
  {
    name: 'IgnitionOffPayload',
    kinds: ['event.ignition_off'],
    schema: payload(
      ['event.ignition_off'],
      { trip_distance_km: Nullable(Type.Number()), trip_duration_s: Nullable(Type.Number()) },
      'Ignition off, closing a trip',
    ),
  },
  {
    name: 'AlarmPayload',
    kinds: ['alarm.dsm.fatigue', 'alarm.dsm.phone', 'alarm.adas.collision', 'alarm.adas.lane_departure', 'alarm.bsd'],
    schema: payload(
      ['alarm.dsm.fatigue', 'alarm.dsm.phone', 'alarm.adas.collision', 'alarm.adas.lane_departure', 'alarm.bsd'],
      { alarm_level: Nullable(Type.Integer()), media_count: Type.Integer({ minimum: 0 }) },
      'Active-safety alarm (driver monitoring, ADAS, blind spot)',
    ),
  },
];
