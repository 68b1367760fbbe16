/**
 * Webhook delivery as one service: the delivery database, the dispatcher
 * (queue → signed HTTP attempts), the reads the API serves (the deliveries of
 * an endpoint, a test send), and the feed that fills the queue from the log
 * (projections/webhooks/feed.ts: the projector and replay jobs), handed in so
 * this folder depends on core only.
 */
import type { Clock } from '../core/clock.js';
import type { EventStore, LogPosition } from '../core/event-store/port.js';
import type { Logger } from '../core/logger.js';
import type { SecretBox } from '../core/secret-box.js';
import { checkpointInBackground, type WalCheckpointer } from '../core/wal-checkpointer.js';
import type { DeliveryFeed, OpenDeliveryFeed } from '../core/webhook-queue.js';
import { openDeliveryDb } from './delivery-db.js';
import { DeliveryLog, type WebhookDeliveryAccess } from './delivery-log.js';
import { WebhookDispatcher, type Outcome } from './dispatcher.js';
import { EndpointCache } from './endpoint-cache.js';
import { SharedDelivery } from './shared-delivery.js';
import type { Coordination } from '../core/coordination/port.js';
import { randomUuid } from '../core/ids.js';
import { hostname } from 'node:os';

export type { AttemptRecord, DeliveryRecord, DeliveryWithAttempts, ReplayRecord, WebhookDeliveryAccess } from './delivery-log.js';

export interface WebhookDeliveryOptions {
  store: EventStore;
  clock: Clock;
  log: Logger;
  dbPath: string;
  box: SecretBox;
  allowPrivate: boolean;
  enterprisePerS: number;
  /** What fills the queue: `webhookFeed(...)` of projections/webhooks/feed.ts. */
  feed: OpenDeliveryFeed;
  random?: () => number;
  onOutcome?: (outcomes: readonly Outcome[]) => void;
  /** Nodes sharing a PostgreSQL: delivery as competing consumers (shared-delivery.ts); null or absent: this node sends all. */
  coordination?: Coordination | null;
}

export class WebhookDelivery implements WebhookDeliveryAccess {
  readonly feed: DeliveryFeed;
  readonly dispatcher: WebhookDispatcher;
  private readonly db;
  private readonly checkpointer: WalCheckpointer;
  readonly reads: DeliveryLog;
  private readonly shared: SharedDelivery | null;
  private readonly coordination: Coordination | null;

  constructor(o: WebhookDeliveryOptions) {
    this.db = openDeliveryDb(o.dbPath);
    // Sends share this thread: a checkpoint's fsync here held them for tens of milliseconds at a time.
    this.checkpointer = checkpointInBackground(this.db);
    const endpoints = new EndpointCache(this.db);
    const shared = o.coordination
      ? new SharedDelivery(o.coordination, this.db, {
          catchUp: () => this.feed.catchUp(),
          reread: (lanes) => {
            dispatcher.untrackLanes(lanes);
            dispatcher.wake(new Set(lanes.map((l) => l.customer_id)));
          },
        }, o.log.child({ part: 'shared-delivery' }), deliveryNodeName())
      : null;
    this.shared = shared;
    this.coordination = o.coordination ?? null;
    const dispatcher = new WebhookDispatcher({
      ...o,
      db: this.db,
      endpoints,
      ...(shared && {
        mayDeliver: (customerId: string) => shared.mayDeliver(customerId),
        onOutcome: (batch: readonly Outcome[]) => {
          shared.committed(batch);
          o.onOutcome?.(batch);
        },
      }),
    });
    this.dispatcher = dispatcher;
    this.feed = o.feed(this.db, {
      accept: (handOff) => dispatcher.accept(handOff),
      untrackLanes: (lanes) => dispatcher.untrackLanes(lanes),
      wake: (customers) => dispatcher.wake(customers),
      forgetEndpoint: (id) => endpoints.forget(id),
    });
    this.reads = new DeliveryLog(this.db, o.box, o.allowPrivate, o.clock);
  }

  async start(): Promise<void> {
    await this.feed.start();
    this.dispatcher.start();
    this.shared?.start();
    this.feed.resume();
  }

  async stop(): Promise<void> {
    this.shared?.pause();
    await this.feed.stop();
    await this.dispatcher.stop();
    await this.shared?.stop();
    await this.coordination?.close();
    this.checkpointer.close();
    this.db.close();
  }

  /** Resolves once the delivery database includes the event at `position` (after a command on an endpoint). */
  waitFor(position: LogPosition): Promise<void> {
    return this.feed.waitFor(position);
  }

  /** Brings the delivery database up to the log's end (the API, before it reads an endpoint's deliveries). */
  catchUp(): Promise<void> {
    return this.feed.catchUp();
  }
}

/** A delivery node's name in the shared leases: host and process (so an operator can tell them apart), unique per start. */
function deliveryNodeName(): string {
  return `${hostname()}:${process.pid}:${randomUuid().slice(0, 8)}`;
}
