/**
 * The contract between what fills the webhook delivery queue (the projector and
 * replay jobs, projections/webhooks/) and what sends it (webhook-delivery/). Both
 * work on the delivery database; these are what they hand each other in memory,
 * so neither folder imports the other.
 */
import type Database from 'better-sqlite3';
import type { LogPosition } from './event-store/port.js';

/** A pending delivery as the queue holds it (a `wh_deliveries` row, with its body). */
export interface QueuedDelivery {
  seq: number;
  delivery_id: string;
  webhook_id: string;
  customer_id: string;
  device_id: string;
  event_id: string;
  kind: string;
  attempts: number;
  next_attempt_at: number;
  body: string;
}

/** An ordering lane: one endpoint's deliveries about one device, sent one at a time in log order. */
export interface LaneRef {
  customer_id: string;
  webhook_id: string;
  device_id: string;
}

/** What the projector committed since its last hand-off. */
export interface HandOff {
  /** Customers with new deliveries or a new agreed rate. */
  customers: Set<string>;
  /** Customers whose agreed rate was set. */
  rates: Set<string>;
  /** New first attempts, in queue order. */
  rows: QueuedDelivery[];
  /** Lanes given pending rows memory does not hold (redeliveries, replays). */
  untrack: LaneRef[];
}

/** What the queue's filler tells delivery, once its writes are committed (endpoint changes as it makes them). */
export interface DeliveryIntake {
  accept(handOff: HandOff): void;
  /** These lanes got pending rows that memory does not hold: they are read from the database. */
  untrackLanes(lanes: readonly LaneRef[]): void;
  /** New deliveries were committed for these customers: look at them now. */
  wake(customers: Iterable<string>): void;
  /** The endpoint's row changed (or is about to): what delivery keeps of it is read again. */
  forgetEndpoint(webhookId: string): void;
}

/** The filler as delivery runs it: it follows the log into the queue. */
export interface DeliveryFeed {
  /** Resolves once the queue has caught up with the log. */
  start(): Promise<void>;
  /** Takes up the open replay jobs (after delivery itself has started). */
  resume(): void;
  stop(): Promise<void>;
  waitFor(position: LogPosition): Promise<void>;
  catchUp(): Promise<void>;
}

/** Opens the filler on the delivery database, telling `intake` what it queues. */
export type OpenDeliveryFeed = (db: Database.Database, intake: DeliveryIntake) => DeliveryFeed;
