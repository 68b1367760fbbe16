/** What delivery decides about an endpoint on its own: disabling one whose receiver said 410 or failed for days. */
import type { Clock } from '../clock.js';
import type { WebhookEndpointDisabled } from '../events.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { randomUuid } from '../ids.js';
import { streams } from '../streams.js';

export async function disableWebhookEndpoint(
  store: EventStore,
  clock: Clock,
  input: { webhook_id: string; customer_id: string; reason: WebhookEndpointDisabled['data']['reason']; detail: string },
): Promise<LogPosition> {
  const result = await store.appendToStream(streams.webhook(input.webhook_id), [
    { id: randomUuid(), type: 'WebhookEndpointDisabled', data: { ...input, disabled_at: clock.now() } },
  ]);
  return result.position;
}
