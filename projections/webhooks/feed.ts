/**
 * What fills the webhook delivery queue, as webhook-delivery/ runs it (the
 * `OpenDeliveryFeed` of core/webhook-queue.ts): the projector on a ProjectionRunner
 * of its own over the delivery database, and the replay jobs behind it.
 *
 * Scale-out: with EventStoreDB several nodes may run delivery; each takes the
 * endpoints of its shard (`FLEET_WEBHOOK_SHARD=k/n`, endpoints split by a hash
 * of their id), so no two nodes ever send the same attempt. With SQLite one
 * process delivers.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import type { EventStore } from '../../core/event-store/port.js';
import type { Logger } from '../../core/logger.js';
import type { OpenDeliveryFeed } from '../../core/webhook-queue.js';
import { ProjectionRunner } from '../runner.js';
import { webhookProjector } from './projector.js';
import { ReplayJobs } from './replay.js';

/** Events the webhook projector applies per transaction, at most. */
const PROJECTOR_BATCH = 1000;

export function ownsEndpoint(shard: { index: number; count: number }, webhookId: string): boolean {
  if (shard.count <= 1) return true;
  return createHash('sha256').update(webhookId).digest().readUInt32BE(0) % shard.count === shard.index;
}

export interface WebhookFeedOptions {
  store: EventStore;
  clock: Clock;
  log: Logger;
  /** This node's shard of endpoints: `{ index, count }`; `{0, 1}` delivers all. */
  shard?: { index: number; count: number };
}

export function webhookFeed(o: WebhookFeedOptions): OpenDeliveryFeed {
  return (db, intake) => {
    const shard = o.shard ?? { index: 0, count: 1 };
    const projector = webhookProjector({ forget: (id) => intake.forgetEndpoint(id) }, (id) => ownsEndpoint(shard, id));
    // Batches of at most PROJECTOR_BATCH events: the sends share this thread, and a long transaction
    // would hold them (and let customers' token buckets fill past their capacity unused).
    const runner = new ProjectionRunner(o.store, db, [projector], o.log.child({ part: 'webhook-projector' }), {
      maxBatch: PROJECTOR_BATCH,
      skip: projector.skip,
    });
    const replays = new ReplayJobs(db, { store: o.store, clock: o.clock, log: o.log, intake });
    runner.onApplied(() => {
      intake.accept(projector.takeHandOff());
      replays.run();
    });
    return {
      start: () => runner.start(),
      resume: () => replays.run(),
      async stop() {
        await replays.stop();
        await runner.stop();
      },
      waitFor: (position) => runner.waitFor(position),
      catchUp: () => runner.catchUp(),
    };
  };
}
