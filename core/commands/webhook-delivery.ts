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
import { newId, randomUuid } from '../ids.js';
import { streams } from '../streams.js';
import { CommandRejected } from './rejection.js';
import { loadWebhook } from './webhooks.js';

/** Longest range one replay may cover. */
export const MAX_REPLAY_RANGE_MS = 31 * 24 * 3_600_000;

/**
 * `decided`: the event's id and time when delivery recorded the decision before appending it
 * (it disables the endpoint at once): an append made again after a crash is then stored once.
 */
export async function disableWebhookEndpoint(
  store: EventStore,
  clock: Clock,
  input: { webhook_id: string; customer_id: string; reason: WebhookEndpointDisabled['data']['reason']; detail: string },
  decided?: { id: string; at: number },
): Promise<LogPosition> {
  const result = await store.appendToStream(streams.webhook(input.webhook_id), [
    { id: decided?.id ?? randomUuid(), type: 'WebhookEndpointDisabled', data: { ...input, disabled_at: decided?.at ?? clock.now() } },
  ]);
  return result.position;
}

/** Sends a delivery again with its event_id and body; the caller checked that the delivery is this endpoint's. */
export async function requestRedelivery(
  store: EventStore,
  clock: Clock,
  input: { customer_id: string; webhook_id: string; delivery_id: string },
): Promise<LogPosition> {
  await loadWebhook(store, input.customer_id, input.webhook_id);
  const result = await store.appendToStream(streams.webhook(input.webhook_id), [
    { id: randomUuid(), type: 'WebhookRedeliveryRequested', data: { ...input, requested_at: clock.now() } },
  ]);
  return result.position;
}

/** Queues again, with their original event_ids, the endpoint's events that happened in [from, to). */
export async function requestReplay(
  store: EventStore,
  clock: Clock,
  input: { customer_id: string; webhook_id: string; from: number; to: number; events: string[] | null },
): Promise<{ replay_id: string; position: LogPosition }> {
  const now = clock.now();
  if (!(input.from < input.to)) throw new CommandRejected('invalid', 'validation_failed', 'from must be before to.', '/from');
  if (input.to - input.from > MAX_REPLAY_RANGE_MS) throw new CommandRejected('invalid', 'range_too_large', 'A replay covers at most 31 days.', '/to');
  await loadWebhook(store, input.customer_id, input.webhook_id);
  const replayId = newId('rpl', now);
  const result = await store.appendToStream(streams.webhook(input.webhook_id), [
    { id: randomUuid(), type: 'WebhookReplayRequested', data: { ...input, replay_id: replayId, requested_at: now } },
  ]);
  return { replay_id: replayId, position: result.position };
}
