/** Data of the event types of GET /v1/stream (documented in the route's description). */
import { Type } from '@sinclair/typebox';
import { COMMAND_KINDS } from '../../core/alarms.js';
import { Command } from './commands.js';
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

/** A published command event: its kind and the command as GET /v1/commands/{id} shows it. */
export const StreamCommand = Type.Object({
  event: Type.Unsafe<string>({ type: 'string', enum: [...COMMAND_KINDS] }),
  event_id: Type.String(),
  occurred_at: Timestamp,
  device_id: Type.String(),
  device_name: Nullable(Type.String()),
  command: Command,
});

export const StreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({ pattern: '^[0-9]+/[0-9]+$', description: 'The id of the last event received: the stream resumes after it' }),
  ),
});
