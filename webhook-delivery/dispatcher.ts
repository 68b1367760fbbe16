/**
 * Sends queued deliveries: the side-effect half of webhooks (the projector fills
 * the queue). It runs the parts on timers and sockets: the scheduler says what to
 * start (scheduler.ts, with the lanes of lanes.ts and each customer's Allowance of
 * limiter.ts), the sender makes signed attempts (send.ts), the recorder commits
 * their outcomes (recorder.ts). A customer's delivery chains wait in a p-queue of
 * its own for one of its slots, so a customer's dead receiver holds only its slots.
 *
 * A chain sends a delivery and, after each success, its lane's next due delivery
 * (as the scheduler allows), in that one slot.
 */
import type Database from 'better-sqlite3';
import PQueue from 'p-queue';
import type { Clock } from '../core/clock.js';
import type { EventStore } from '../core/event-store/port.js';
import type { Logger } from '../core/logger.js';
import type { SecretBox } from '../core/secret-box.js';
import type { HandOff, LaneRef, QueuedDelivery } from '../core/webhook-queue.js';
import { customerRates, laneReads } from './delivery-db.js';
import type { EndpointCache } from './endpoint-cache.js';
import { LaneQueues, type DueRow, type LaneReads } from './lanes.js';
import { concurrencyFor } from './limiter.js';
import { OutcomeRecorder, type Outcome } from './recorder.js';
import { Scheduler } from './scheduler.js';
import { Sender } from './send.js';

export type { Outcome } from './recorder.js';

const TICK_MS = 50;

export interface DispatcherOptions {
  db: Database.Database;
  store: EventStore;
  clock: Clock;
  log: Logger;
  box: SecretBox;
  /** Endpoints as sends need them; the projector on the same connection forgets those it changes. */
  endpoints: EndpointCache;
  allowPrivate: boolean;
  enterprisePerS: number;
  random?: () => number;
  /** Called after each committed batch of outcomes (tests and metrics). */
  onOutcome?: (outcomes: readonly Outcome[]) => void;
  /** Whether this node sends the customer's deliveries now (shared-delivery.ts); absent: all of them. */
  mayDeliver?: (customerId: string) => boolean;
}

export class WebhookDispatcher {
  private readonly reads: LaneReads;
  private readonly scheduler: Scheduler;
  private readonly sender: Sender;
  private readonly recorder: OutcomeRecorder;
  /** Each customer's slots: at most concurrencyFor(its rate) chains send at once, the rest wait here. */
  private readonly slots = new Map<string, PQueue>();
  private timer: NodeJS.Timeout | null = null;
  private pumpScheduled = false;
  private stopped = false;
  stats = { attempts: 0, delivered: 0, failedAttempts: 0 };

  constructor(private readonly o: DispatcherOptions) {
    this.reads = laneReads(o.db);
    this.scheduler = new Scheduler({
      lanes: new LaneQueues(this.reads, o.endpoints),
      endpoints: o.endpoints,
      rateOf: customerRates(o.db, o.enterprisePerS),
      onIdle: (customerId) => this.slots.delete(customerId),
      ...(o.mayDeliver && { mayDeliver: o.mayDeliver }),
    });
    this.sender = new Sender({ box: o.box, allowPrivate: o.allowPrivate, log: o.log, socketsFor: (c) => concurrencyFor(this.scheduler.rate(c)) });
    this.recorder = new OutcomeRecorder(o.db, o.endpoints, { ...o, random: o.random ?? Math.random, onCommitted: (batch) => this.committed(batch) });
  }

  start(): void {
    // What was pending before this start is only in the database.
    this.scheduler.untrackLanes(this.reads.pendingLanes(), this.o.clock.now());
    this.recorder.announceLeftOver();
    this.timer = setInterval(() => {
      this.scheduler.tick();
      this.pump();
    }, TICK_MS);
    this.timer.unref();
    this.pump();
  }

  /** New deliveries were committed for these customers (or a new agreed rate, `rates`): look at them now rather than at the next tick. */
  wake(customers: Iterable<string>, rates: ReadonlySet<string> = new Set()): void {
    const list = [...customers];
    this.scheduler.wake(list, rates, this.o.clock.now());
    for (const c of list) {
      if (!rates.has(c)) continue;
      const n = concurrencyFor(this.scheduler.rate(c));
      const slots = this.slots.get(c);
      if (slots) slots.concurrency = n;
      this.sender.resize(c, n);
    }
    this.schedulePump();
  }

  /** Takes what the projector committed: its lanes join their customers' sets, and the rows of tracked lanes are held. */
  accept(handOff: HandOff): void {
    this.scheduler.accept(handOff, this.o.clock.now());
    this.wake(handOff.customers, handOff.rates);
  }

  /** These lanes got pending rows that memory does not hold (a replay, a redelivery, a restart): they are read. */
  untrackLanes(lanes: readonly LaneRef[]): void {
    this.scheduler.untrackLanes(lanes, this.o.clock.now());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.all([...this.slots.values()].map((q) => q.onIdle()));
    this.recorder.flush();
    this.sender.destroy();
  }

  private schedulePump(): void {
    if (this.pumpScheduled || this.stopped) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Starts what the scheduler says may start now. */
  private pump(): void {
    if (this.stopped) return;
    const now = this.o.clock.now();
    for (const { customerId, row } of this.scheduler.plan(now).starts) void this.slotsOf(customerId).add(() => this.chain(row));
    this.recorder.pruneIfDue(now);
  }

  private slotsOf(customerId: string): PQueue {
    let slots = this.slots.get(customerId);
    if (!slots) {
      slots = new PQueue({ concurrency: concurrencyFor(this.scheduler.rate(customerId)) });
      this.slots.set(customerId, slots);
    }
    return slots;
  }

  /**
   * Sends `first`, and after each success the lane's next due delivery, in this one slot of the
   * customer's. The lane's following rows are read a few at a time (`ahead`), not one query per
   * delivery: while this chain runs the lane is busy, so nothing else sends them meanwhile.
   */
  private async chain(first: DueRow): Promise<void> {
    const ahead: QueuedDelivery[] = [];
    try {
      for (let row: DueRow | null = first; row; ) {
        const ok = await this.attemptOne(row);
        row = ok && !this.stopped ? this.scheduler.nextInLane(row, ahead, this.o.clock.now()) : null;
      }
    } finally {
      this.scheduler.chainEnded(first.customer_id);
    }
  }

  /** One signed attempt; its outcome joins the recorder's next batch. Returns whether it succeeded. */
  private async attemptOne(row: DueRow): Promise<boolean> {
    // Claimed before a 410 (on another lane) disabled its endpoint: it stays pending, unsent.
    // Or its customer's lease is no longer this node's to use: it stays pending for the holder.
    if (!this.o.endpoints.get(row.webhook_id)?.enabled || (this.o.mayDeliver && !this.o.mayDeliver(row.customer_id))) {
      this.scheduler.unclaim(row);
      return false;
    }
    const now = this.o.clock.now();
    const attempt = row.attempts + 1;
    const result = await this.sender.send(row, attempt, now);
    this.stats.attempts += 1;
    if (result.ok) this.stats.delivered += 1;
    else this.stats.failedAttempts += 1;
    this.recorder.record({ row, attempt, at: now, result });
    return result.ok;
  }

  /** A batch of outcomes is committed: their deliveries may be picked again (a retry) or not (done). */
  private committed(batch: readonly Outcome[]): void {
    for (const o of batch) this.scheduler.settled(o.row, o.result.ok);
    this.o.onOutcome?.(batch);
    this.schedulePump();
  }
}
