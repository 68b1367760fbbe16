/**
 * Webhook payloads, one TypeBox schema per payload family. They document
 * what the webhook projector sends, under the OpenAPI document's `webhooks`;
 * the projector's tests can validate against them. Below them: the bodies of
 * the endpoint management routes (api/routes/webhooks.ts).
 */
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { COMMAND_KINDS, type EventKind } from '../../core/alarms.js';
import { DEFAULT_GRACE_PERIOD_S, MAX_GRACE_PERIOD_S } from '../../core/commands/webhooks.js';
import type { WebhookEndpointRow } from '../../projections/webhook-endpoints/index.js';
import { Command } from './commands.js';
import { Limit, Nullable, Pagination, Timestamp, iso } from './common.js';

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
    name: 'GeofenceDwellPayload',
    kinds: ['geofence.dwell'],
    schema: payload(
      ['geofence.dwell'],
      {
        geofence_id: Type.String(),
        geofence_name: Type.String(),
        dwell_s: Type.Number({ description: 'Time inside so far: at least the geofence\'s dwell_s' }),
      },
      'A device has stayed inside a geofence for its dwell threshold (once per visit); position: the fix that reached it',
    ),
  },
  {
    name: 'HarshDrivingPayload',
    kinds: ['event.harsh_brake', 'event.acceleration', 'event.curve'],
    schema: payload(
      ['event.harsh_brake', 'event.acceleration', 'event.curve'],
      {
        delta_kmh: Nullable(Type.Number({ description: 'Signed speed change (after − before); null when the device reported the event without its speeds' })),
        duration_ms: Nullable(Type.Integer({ description: 'How long the manoeuvre lasted; null when unknown' })),
      },
      'Harsh braking, acceleration or cornering',
    ),
  },
  {
    name: 'OverspeedPayload',
    kinds: ['event.overspeed'],
    schema: payload(
      ['event.overspeed'],
      {
        limit_kmh: Nullable(Type.Number({ description: 'The limit that applied; null when the device raised it on its own limit' })),
        delta_kmh: Nullable(Type.Number({ description: 'Speed minus the limit; null when the limit is unknown' })),
      },
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
  {
    name: 'CommandPayload',
    kinds: COMMAND_KINDS,
    schema: payload(COMMAND_KINDS, { command: Command }, 'A device command was sent, succeeded (with the reply), failed or expired unsent: the command as GET /v1/commands/{id} shows it'),
  },
  {
    name: 'TripCompletedPayload',
    kinds: ['trip.completed'],
    schema: payload(
      ['trip.completed'],
      {
        trip_started_at: Timestamp,
        trip_distance_km: Type.Number(),
        trip_duration_s: Type.Integer(),
        trip_idle_s: Type.Integer({ description: 'Idling (engine on, standing) inside the trip' }),
        trip_max_speed_kmh: Type.Number(),
      },
      'A trip ended (the vehicle stood for the minimal stop); position: where it ended. GET /v1/trips has it, late fixes included',
    ),
  },
  {
    name: 'IdleEndedPayload',
    kinds: ['idle.ended'],
    schema: payload(
      ['idle.ended'],
      { idle_started_at: Timestamp, idle_duration_s: Type.Integer({ description: 'Engine on and standing this long' }) },
      'An idle (engine on, standing at least the minimal idle) ended; position: where it idled',
    ),
  },
];

// ---- Endpoint management (POST/GET/PATCH/DELETE /v1/webhooks) ----

const KIND_PATTERNS_DESCRIPTION =
  'Event kinds to deliver: exact kinds (`geofence.enter`), a prefix ending in `.*` that names at least one kind (`alarm.*`, `alarm.dsm.*`), or `*` for all. An unknown kind is a 400 whose pointer names it.';

const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'https URL of your receiver; private, loopback and link-local addresses are refused (unless the server runs with FLEET_WEBHOOK_ALLOW_PRIVATE=true, for local development)',
});
const EventPatterns = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 50, description: KIND_PATTERNS_DESCRIPTION });
const DeviceIds = Nullable(
  Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 1000, description: 'Only events of these devices; null (the default): every device' }),
);
const Description = Nullable(Type.String({ maxLength: 500 }));

export const CreateWebhookBody = Type.Object(
  {
    url: WebhookUrl,
    events: EventPatterns,
    device_ids: Type.Optional(DeviceIds),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(WebhookUrl),
    events: Type.Optional(EventPatterns),
    device_ids: Type.Optional(DeviceIds),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean({ description: 'true also turns back on an endpoint the platform disabled' })),
  },
  { additionalProperties: false },
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

export const RotateWebhookSecretBody = Type.Object(
  {
    grace_period_s: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_PERIOD_S,
        default: DEFAULT_GRACE_PERIOD_S,
        description: 'How long the previous secret still signs (in X-Service-Signature-Previous); 0 ends it now',
      }),
    ),
  },
  { additionalProperties: false },
);

export const WebhookParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const ListWebhooksQuery = Type.Object({ limit: Limit(200), cursor: Type.Optional(Type.String({ maxLength: 512 })) }, { additionalProperties: false });
export type ListWebhooksQuery = Static<typeof ListWebhooksQuery>;

const webhookProperties = {
  id: Type.String({ description: '`whk_…`' }),
  url: Type.String(),
  events: Type.Array(Type.String(), { description: 'The patterns as given' }),
  device_ids: Nullable(Type.Array(Type.String())),
  description: Nullable(Type.String()),
  enabled: Type.Boolean(),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled'), Type.Literal('disabled_by_platform')], {
    description: '`disabled`: by you (enabled false); `disabled_by_platform`: the receiver answered 410 or failed for days (see disabled_reason); PATCH enabled true to resume',
  }),
  disabled_reason: Nullable(Type.Union([Type.Literal('gone'), Type.Literal('failing')])),
  disabled_detail: Nullable(Type.String()),
  disabled_at: Nullable(Timestamp),
  secret_rotated_at: Nullable(Timestamp),
  previous_secret_valid_until: Nullable(Type.String({ format: 'date-time', description: 'End of the last rotation grace period' })),
  created_at: Timestamp,
  updated_at: Timestamp,
};

/** An endpoint as the API shows it: never its secret. */
export const Webhook = Type.Object(webhookProperties);
export type Webhook = Static<typeof Webhook>;

const Secret = Type.String({ description: '`whsec_…`: shown this once; sign-check deliveries with it' });

export const CreatedWebhook = Type.Object({ ...webhookProperties, secret: Secret });

export const RotatedWebhookSecret = Type.Object({
  secret: Secret,
  previous_secret_valid_until: Type.String({ format: 'date-time', description: 'Until then deliveries also carry the previous secret’s signature' }),
});

export const WebhookList = Type.Object({ data: Type.Array(Webhook), pagination: Pagination });

export function webhookBody(w: WebhookEndpointRow): Webhook {
  return {
    id: w.webhook_id,
    url: w.url,
    events: w.events,
    device_ids: w.device_ids,
    description: w.description,
    enabled: w.enabled,
    status: w.enabled ? 'enabled' : w.disabled_reason ? 'disabled_by_platform' : 'disabled',
    disabled_reason: w.disabled_reason,
    disabled_detail: w.disabled_detail,
    disabled_at: iso(w.disabled_at),
    secret_rotated_at: iso(w.secret_rotated_at),
    previous_secret_valid_until: iso(w.previous_secret_valid_until),
    created_at: iso(w.created_at),
    updated_at: iso(w.updated_at),
  };
}
