/** Data of the two event types of GET /v1/stream (documented in the route's description). */
import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp } from './common.js';
import { Severity, WebhookPosition } from './webhooks.js';

export { StreamPosition } from './positions.js';

/** The webhook payload of the kind, minus `sequence`, plus `source`. */
export const StreamEvent = Type.Object(
  {
    event: Type.String(),
    event_id: Type.String(),
    occurred_at: Timestamp,
    device_id: Type.String(),
    device_name: Nullable(Type.String()),
    driver_id: Nullable(Type.String()),
    severity: Severity,
    source: Type.Union([Type.Literal('device'), Type.Literal('server')]),
    position: Nullable(WebhookPosition),
  },
  { additionalProperties: true },
);

export const StreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({ pattern: '^[0-9]+/[0-9]+$', description: 'The id of the last event received: the stream resumes after it' }),
  ),
});
