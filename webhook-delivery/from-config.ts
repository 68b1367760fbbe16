/**
 * Webhook delivery as the configuration describes it: its database in the data dir, its limits, the
 * projector's feed (for this node's shard on EventStoreDB), and on PostgreSQL the coordination of the
 * nodes sharing it. The one module here that imports projections/ (its feed):
 * both the thread entry and the in-process start compose through it.
 */
import { join } from 'node:path';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { EventStore } from '../core/event-store/port.js';
import type { Logger } from '../core/logger.js';
import type { SecretBox } from '../core/secret-box.js';
import { webhookFeed } from '../projections/webhooks/feed.js';
import { openCoordination } from '../core/coordination/open.js';
import { WebhookDelivery } from './index.js';

/** Where webhook delivery keeps its queue and log in a data dir. */
export const deliveryDbPath = (dataDir: string): string => join(dataDir, 'webhooks.sqlite');

export async function webhookDeliveryFromConfig(config: Config, store: EventStore, clock: Clock, log: Logger, box: SecretBox): Promise<WebhookDelivery> {
  return new WebhookDelivery({
    store,
    clock,
    log,
    dbPath: deliveryDbPath(config.dataDir),
    box,
    allowPrivate: config.allowPrivateWebhookUrls,
    enterprisePerS: config.webhookEnterprisePerS,
    feed: webhookFeed({ store, clock, log, shard: config.webhookShard }),
    // Nodes sharing a PostgreSQL compete for customers; WebhookDelivery closes it when it stops.
    coordination: await openCoordination(config.store),
  });
}
