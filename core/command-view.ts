/**
 * A command as customers see it: the API's body, the webhook payload's
 * `command` and the live stream's. One function, so the three never differ.
 */
import type { CommandKind } from './alarms.js';
import type { CommandSnapshot, DeviceCommandEvent } from './events/commands.js';
import { deviceEventId } from './ids.js';

export interface CommandView {
  id: string;
  device_id: string;
  type: CommandSnapshot['type'];
  params: CommandSnapshot['params'];
  status: CommandSnapshot['status'];
  waiting_for: CommandSnapshot['waiting_for'];
  created_at: string;
  sent_at: string | null;
  acknowledged_at: string | null;
  completed_at: string | null;
  expires_at: string;
  response: CommandSnapshot['response'];
  error: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function commandView(c: CommandSnapshot): CommandView {
  return {
    id: c.command_id,
    device_id: c.device_id,
    type: c.type,
    params: c.params,
    status: c.status,
    waiting_for: c.waiting_for,
    created_at: iso(c.created_at)!,
    sent_at: iso(c.sent_at),
    acknowledged_at: iso(c.acknowledged_at),
    completed_at: iso(c.completed_at),
    expires_at: iso(c.expires_at)!,
    response: c.response,
    error: c.error,
  };
}

/** The webhook and stream kind each command event is published as; the other events are not published. */
export const PUBLISHED_COMMAND_EVENTS: Readonly<Partial<Record<DeviceCommandEvent['type'], CommandKind>>> = {
  DeviceCommandSent: 'command.sent',
  DeviceCommandSucceeded: 'command.succeeded',
  DeviceCommandFailed: 'command.failed',
  DeviceCommandExpired: 'command.expired',
};

/** The kind `eventType` is published as, or null. */
export function publishedCommandKind(eventType: string): CommandKind | null {
  return PUBLISHED_COMMAND_EVENTS[eventType as DeviceCommandEvent['type']] ?? null;
}

/** The `event_id` a published command event has in webhooks and on the stream: the same on every replay. */
export function commandEventId(kind: CommandKind, at: number, storedEventId: string): string {
  return deviceEventId(at, `${kind}:${storedEventId}`);
}
