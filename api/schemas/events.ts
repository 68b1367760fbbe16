/**
 * Events (`GET /v1/events`, `/v1/events/{id}`, `/v1/feed`). An item is shaped
 * like the webhook payload (docs/api-decisions.md) (and like Samsara's safety events): the
 * common fields, then the payload fields of its kind at the top level.
 */
import { Type, type Static } from '@sinclair/typebox';
import { EVENT_KINDS } from '../../core/alarms.js';
import type { DeviceEventRaised } from '../../core/events.js';
import type { EventRow } from '../queries/events.js';
import { Limit, Nullable, Pagination, Timestamp, iso } from './common.js';

export type RaisedKind = DeviceEventRaised['data']['kind'];

/** Kinds an event entry can have: every webhook kind except position, connectivity and command updates. */
export const RAISED_KINDS = EVENT_KINDS.filter(
  (k): k is RaisedKind => k !== 'position.updated' && k !== 'device.online' && k !== 'device.offline' && !k.startsWith('command.'),
);
export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;

const EventPosition = Type.Object({
  lat: Type.Number(),
  lng: Type.Number(),
  speed_kmh: Nullable(Type.Number()),
  heading_deg: Nullable(Type.Number()),
  timestamp: Timestamp,
});

/** Payload fields per kind (docs/api-decisions.md, "Payload"); an item has those of its kind only. */
const KindFields = {
  delta_kmh: Type.Optional(
    Nullable(Type.Number({ description: 'harsh kinds: signed speed change (after − before); overspeed: speed − limit; null when the device did not say' })),
  ),
  duration_ms: Type.Optional(Nullable(Type.Integer({ description: 'harsh kinds: how long the manoeuvre lasted' }))),
  limit_kmh: Type.Optional(Nullable(Type.Number({ description: 'overspeed: the limit that applied' }))),
  geofence_id: Type.Optional(Type.String()),
  geofence_name: Type.Optional(Type.String()),
  dwell_s: Type.Optional(Nullable(Type.Integer({ description: 'geofence.exit: time spent inside; geofence.dwell: time inside so far' }))),
  alarm_level: Type.Optional(Nullable(Type.Integer({ description: 'alarm kinds: the device-side level' }))),
  media_count: Type.Optional(Type.Integer({ description: 'alarm kinds: attachments the device announced' })),
  trip_distance_km: Type.Optional(Nullable(Type.Number({ description: 'ignition_off: distance since ignition on' }))),
  trip_duration_s: Type.Optional(Nullable(Type.Integer({ description: 'ignition_off: time since ignition on; trip.completed: the trip\'s' }))),
  trip_started_at: Type.Optional(Timestamp),
  trip_idle_s: Type.Optional(Type.Integer({ description: 'trip.completed: idling inside the trip' })),
  trip_max_speed_kmh: Type.Optional(Type.Number()),
  idle_started_at: Type.Optional(Timestamp),
  idle_duration_s: Type.Optional(Type.Integer({ description: 'idle.ended: engine on and standing this long' })),
};

const common = {
  id: Type.String({ description: 'evt_…, stable across retries and replays; equals the webhook event_id' }),
  kind: Type.Union(RAISED_KINDS.map((k) => Type.Literal(k))),
  severity: Type.Union(SEVERITIES.map((s) => Type.Literal(s))),
  occurred_at: Timestamp,
  device_id: Type.String(),
  device_name: Nullable(Type.String()),
  driver_id: Nullable(Type.String({ description: 'the driver linked to the device when it happened' })),
  source: Type.Union([Type.Literal('device'), Type.Literal('server')], {
    description: 'device: reported by the tracker; server: detected from its fixes',
  }),
  position: Nullable(EventPosition),
  ...KindFields,
};

export const EventItem = Type.Object(common);
export const EventDetail = Type.Object({
  ...common,
  context: Type.Record(Type.String(), Type.Unknown(), {
    description: 'why: speeds before/after, thresholds, rule, raw protocol fields',
  }),
  media: Type.Array(Type.Object({ type: Type.String(), url: Type.Optional(Type.String()), label: Type.Optional(Type.String()) })),
});
export const FeedItem = Type.Object({ sequence: Type.Integer({ description: 'position in commit order, increasing' }), ...common });

export const EventList = Type.Object({ data: Type.Array(EventItem), pagination: Pagination });
export const FeedList = Type.Object({ data: Type.Array(FeedItem), pagination: Pagination });

export const ListEventsQuery = Type.Object(
  {
    device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 2_000, description: 'comma-separated device ids' })),
    driver_id: Type.Optional(Type.String({ minLength: 1, maxLength: 2_000, description: 'comma-separated driver ids' })),
    kind: Type.Optional(Type.String({ minLength: 1, maxLength: 1_000, description: 'comma-separated kinds and prefix.* (alarm.*, event.*)' })),
    severity: Type.Optional(
      Type.String({ pattern: '^(info|low|medium|high|critical)(,(info|low|medium|high|critical))*$', description: 'comma-separated' }),
    ),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339 with Z or an offset, inclusive' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339 with Z or an offset, exclusive' })),
    order: Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc', description: 'by occurred_at; newest first by default' }),
    limit: Limit(200),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
    format: Type.Union([Type.Literal('json'), Type.Literal('csv')], {
      default: 'json',
      description: 'csv: every event of the filters streamed as one file (limit and cursor do not apply)',
    }),
  },
  { additionalProperties: false },
);
export type ListEventsQuery = Static<typeof ListEventsQuery>;

export const FeedQuery = Type.Object(
  { limit: Limit(200), cursor: Type.Optional(Type.String({ maxLength: 512 })) },
  { additionalProperties: false },
);

export const EventIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export function eventItem(row: EventRow): Static<typeof EventItem> {
  const p = row.position ? (JSON.parse(row.position) as NonNullable<DeviceEventRaised['data']['position']>) : null;
  return {
    id: row.event_id,
    kind: row.kind as RaisedKind,
    severity: row.severity as Static<typeof EventItem>['severity'],
    occurred_at: iso(row.occurred_at),
    device_id: row.device_id,
    device_name: row.device_name,
    driver_id: row.driver_id,
    source: row.source,
    position: p ? { lat: p.lat, lng: p.lng, speed_kmh: p.speed_kmh, heading_deg: p.heading_deg, timestamp: iso(p.timestamp) } : null,
    ...(JSON.parse(row.fields) as Record<string, number | string | null>),
  };
}

export function eventDetail(row: EventRow): Static<typeof EventDetail> {
  return {
    ...eventItem(row),
    context: JSON.parse(row.context) as Record<string, unknown>,
    media: JSON.parse(row.media) as Static<typeof EventDetail>['media'],
  };
}

export function feedItem(row: EventRow): Static<typeof FeedItem> {
  return { sequence: row.seq, ...eventItem(row) };
}
