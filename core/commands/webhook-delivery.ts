/**
 * Commands about delivering to an endpoint (its configuration has its own
 * commands): send a delivery again, replay a time range, and what delivery
 * decides alone, disabling an endpoint whose receiver said 410 or failed for
 * days. They are events on the endpoint's stream, so whichever node delivers
 * the endpoint acts on them, in order with its configuration.
 */
import type { Clock } from '../clock.js';
import type { WebhookEndpointDisabled } from '../events.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { newId } from '../ids.js';
import type { WebhookEndpointRow } from '../webhook-endpoint.js';
import type { NewEvent } from './handler.js';
import { CommandRejected } from './rejection.js';
import { checkWebhook, onWebhook } from './webhooks.js';

/** Longest range one replay may cover. */
export const MAX_REPLAY_RANGE_MS = 31 * 24 * 3_600_000;

type DisableInput = { webhook_id: string; customer_id: string; reason: WebhookEndpointDisabled['data']['reason']; detail: string };

/** Delivery decided it already: the endpoint's state cannot refuse it. `decided.id` keeps a resend stored once. */
export function decideDisableWebhookEndpoint(_row: WebhookEndpointRow | null, input: DisableInput, decided: { id?: string; at: number }): NewEvent[] {
  return [{ ...(decided.id ? { id: decided.id } : {}), type: 'WebhookEndpointDisabled', data: { ...input, disabled_at: decided.at } }];
}

/**
 * `decided`: the event's id and time when delivery recorded the decision before appending it
 * (it disables the endpoint at once): an append made again after a crash is then stored once.
 */
export async function disableWebhookEndpoint(store: EventStore, clock: Clock, input: DisableInput, decided?: { id: string; at: number }): Promise<LogPosition> {
  const made = decided ?? { at: clock.now() };
  return (await onWebhook(store, input.webhook_id, (row) => decideDisableWebhookEndpoint(row, input, made))).position!;
}

export function decideRequestRedelivery(
  row: WebhookEndpointRow | null,
  input: { customer_id: string; webhook_id: string; delivery_id: string },
  now: number,
): NewEvent[] {
  checkWebhook(row, input.customer_id, input.webhook_id);
  return [{ type: 'WebhookRedeliveryRequested', data: { ...input, requested_at: now } }];
}

/** Sends a delivery again with its event_id and body; the caller checked that the delivery is this endpoint's. */
export async function requestRedelivery(
  store: EventStore,
  clock: Clock,
  input: { customer_id: string; webhook_id: string; delivery_id: string },
): Promise<LogPosition> {
  const now = clock.now();
  return (await onWebhook(store, input.webhook_id, (row) => decideRequestRedelivery(row, input, now))).position!;
}

type ReplayInput = { customer_id: string; webhook_id: string; from: number; to: number; events: string[] | null };

/** The range is checked before the endpoint: a malformed one is refused for any endpoint. */
export function decideRequestReplay(row: WebhookEndpointRow | null, input: ReplayInput & { replay_id: string }, now: number): NewEvent[] {
  if (!(input.from < input.to)) throw new CommandRejected('invalid', 'validation_failed', 'from must be before to.', '/from');
  if (input.to - input.from > MAX_REPLAY_RANGE_MS) throw new CommandRejected('invalid', 'range_too_large', 'A replay covers at most 31 days.', '/to');
  checkWebhook(row, input.customer_id, input.webhook_id);
  return [{ type: 'WebhookReplayRequested', data: { ...input, requested_at: now } }];
}

/** Queues again, with their original event_ids, the endpoint's events that happened in [from, to). */
export async function requestReplay(store: EventStore, clock: Clock, input: ReplayInput): Promise<{ replay_id: string; position: LogPosition }> {
  const now = clock.now();
  const replayId = newId('rpl', now);
  const { position } = await onWebhook(store, input.webhook_id, (row) => decideRequestReplay(row, { ...input, replay_id: replayId }, now));
  return { replay_id: replayId, position: position! };
}
