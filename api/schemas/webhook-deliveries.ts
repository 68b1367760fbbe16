/** Deliveries of a webhook endpoint: the log integrators debug with, the test send, and replays and their state. */
import { Type, type Static } from '@sinclair/typebox';
import { EVENT_KINDS } from '../../core/alarms.js';
import type { AttemptRecord, DeliveryRecord, ReplayRecord } from '../../webhook-delivery/index.js';
import { Limit, Nullable, Pagination, Timestamp, iso } from './common.js';

export const WebhookIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const DeliveryParams = Type.Object({ id: Type.String({ maxLength: 64 }), delivery_id: Type.String({ maxLength: 64 }) });
export const ReplayParams = Type.Object({ id: Type.String({ maxLength: 64 }), replay_id: Type.String({ maxLength: 64 }) });

/** The states a delivery can be in (the `state` filter of the list takes the same). */
export const DELIVERY_STATES = ['pending', 'delivered', 'failed', 'cancelled'] as const;

const Kind = Type.Unsafe<string>({ type: 'string', enum: [...EVENT_KINDS] });

export const Delivery = Type.Object({
  id: Type.String({ description: '`dlv_…`, the X-Service-Delivery-Id header' }),
  webhook_id: Type.String(),
  event: Kind,
  event_id: Type.String({ description: 'The X-Service-Event-Id header; the id GET /v1/events shows' }),
  device_id: Type.String(),
  state: Type.Union(DELIVERY_STATES.map((s) => Type.Literal(s)), {
    description: 'pending (waiting for its first attempt or a retry), delivered (a 2xx), failed (retries exhausted, or 410), cancelled (endpoint deleted)',
  }),
  attempts: Type.Integer({ description: 'Attempts made so far' }),
  created_at: Timestamp,
  last_attempt_at: Nullable(Timestamp),
  last_status: Nullable(Type.Integer({ description: "The receiver's HTTP status of the last attempt" })),
  last_error: Nullable(Type.String({ description: 'timeout, connection_refused, redirect_not_followed, forbidden_address, …' })),
  last_latency_ms: Nullable(Type.Integer()),
  next_attempt_at: Nullable(Timestamp),
  replay_id: Nullable(Type.String()),
});

export const Attempt = Type.Object({
  attempt: Type.Integer(),
  at: Timestamp,
  status: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  latency_ms: Nullable(Type.Integer()),
  response_body_start: Nullable(Type.String({ description: "The start of the receiver's answer (at most 1 KiB)" })),
});

export const DeliveryDetail = Type.Composite([Delivery, Type.Object({ attempt_log: Type.Array(Attempt) })]);
export const DeliveryList = Type.Object({ data: Type.Array(Delivery), pagination: Pagination });
export const ListDeliveriesQuery = Type.Object(
  {
    state: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: `comma-separated states: ${DELIVERY_STATES.join(', ')}` })),
    event: Type.Optional(Type.String({ minLength: 1, maxLength: 1_000, description: 'comma-separated kinds and prefix.* (device.*, alarm.*)' })),
    limit: Limit(200),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

/** Optional as a whole: no body, an empty one and {} all send the default sample (api/plugins/json-bodies.ts). */
export const TestDeliveryBody = Type.Optional(
  Type.Object({ event: Type.Optional(Kind) }, { additionalProperties: false, description: 'The kind of sample to send (default position.updated)' }),
);
export const TestDeliveryResult = Type.Object({
  delivered: Type.Boolean({ description: 'A 2xx within 10 s' }),
  status: Nullable(Type.Integer()),
  latency_ms: Type.Integer(),
  error: Nullable(Type.String()),
  response_body_start: Type.String(),
  event_id: Type.String(),
  delivery_id: Type.String(),
  body: Type.String({ description: 'The exact bytes sent (signed)' }),
});

export const ReplayBody = Type.Object(
  {
    from: Timestamp,
    to: Timestamp,
    events: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 32, description: 'Patterns as on the endpoint; default all it subscribes to' })),
  },
  { additionalProperties: false },
);
export const ReplayAccepted = Type.Object({ replay_id: Type.String(), from: Timestamp, to: Timestamp, events: Nullable(Type.Array(Type.String())) });

export const Replay = Type.Object({
  replay_id: Type.String({ description: '`rpl_…`, the `replay_id` of the deliveries it queued' }),
  webhook_id: Type.String(),
  from: Timestamp,
  to: Timestamp,
  events: Nullable(Type.Array(Type.String(), { description: 'The patterns asked for; null: all the endpoint subscribes to' })),
  state: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done')], {
    description: 'queued (waiting for delivery to take it up), running (queuing the events again), done (every matching event is queued; the deliveries show how each went)',
  }),
  deliveries_queued: Type.Integer({ description: 'Deliveries queued so far' }),
  requested_at: Timestamp,
  completed_at: Nullable(Timestamp),
});

export function replayBody(r: ReplayRecord): Static<typeof Replay> {
  return {
    replay_id: r.replay_id,
    webhook_id: r.webhook_id,
    from: iso(r.from),
    to: iso(r.to),
    events: r.events,
    state: r.state,
    deliveries_queued: r.deliveries_queued,
    requested_at: iso(r.requested_at),
    completed_at: iso(r.completed_at),
  };
}

export function deliveryBody(d: DeliveryRecord): Static<typeof Delivery> {
  return {
    id: d.delivery_id,
    webhook_id: d.webhook_id,
    event: d.kind,
    event_id: d.event_id,
    device_id: d.device_id,
    state: d.state,
    attempts: d.attempts,
    created_at: iso(d.created_at),
    last_attempt_at: iso(d.last_attempt_at),
    last_status: d.last_status,
    last_error: d.last_error,
    last_latency_ms: d.last_latency_ms,
    // A first attempt is due "at once" (0): it is shown as due when it was queued.
    next_attempt_at: d.next_attempt_at === null ? null : iso(Math.max(d.next_attempt_at, d.created_at)),
    replay_id: d.replay_id,
  };
}

export function attemptBody(a: AttemptRecord): Static<typeof Attempt> {
  return { attempt: a.attempt, at: iso(a.at), status: a.status, error: a.error, latency_ms: a.latency_ms, response_body_start: a.response_start };
}
