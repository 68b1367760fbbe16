/**
 * Decides what to send next, on the time it is given: no sockets, no timers, no writes.
 * Each customer has a CustomerShare: the lanes (endpoint, device) it has pending
 * deliveries in, its Allowance (plan rate), and how many delivery chains it has going.
 * `plan(now)` starts the head of each free lane while the customer's allowance and
 * its bound on requests in flight last, and says when a customer next has something due.
 *
 * A plan costs what it starts, not the backlog: each share keeps the set of its
 * lanes (new ones handed over by the projector, and all of them read again every few
 * seconds), and only a lane's first rows are looked at. A receiver that was down for
 * an hour does not make every plan read the hour.
 */
import type { HandOff, LaneRef, QueuedDelivery } from '../core/webhook-queue.js';
import { Allowance, concurrencyFor } from './limiter.js';
import { laneKey, type DueRow, type Endpoints, type Lane, type LaneQueues } from './lanes.js';

/** Deliveries in flight over all customers, at most. */
const MAX_IN_FLIGHT_TOTAL = 4096;
/** How often a customer's whole set of lanes is read again (endpoints enabled again, anything memory missed). */
const LANE_REDISCOVERY_MS = 5_000;
/** Rows of a lane a delivery chain reads at once (after a success it goes on with the next). */
const READ_AHEAD_ROWS = 8;

interface CustomerShare {
  allowance: Allowance;
  /** Nothing of this customer is due before this time (0: look now). */
  nextDueAt: number;
  /**
   * Something may have changed since its last look: new deliveries, an outcome committed, an
   * allowance it ran out of, or time (every tick marks all). A plan between ticks looks at only these.
   */
  dirty: boolean;
  /** Delivery chains started and not ended (queued for a slot, or sending). */
  chains: number;
  /** Lanes that had pending deliveries at the last look, by `laneKey`. */
  lanes: Map<string, Lane>;
  /** When the whole lane set is read again. */
  rediscoverAt: number;
  /** Where the next look starts in the lane set, so no lane always comes last. */
  cursor: number;
}

export interface SchedulerOptions {
  lanes: LaneQueues;
  endpoints: Endpoints;
  /** The customer's deliveries a second: its agreed rate, else its plan's. */
  rateOf(customerId: string): number;
  /** The customer has nothing pending and nothing going: what is kept of it is its allowance. */
  onIdle?(customerId: string): void;
  /** Whether this node sends the customer's deliveries now (several nodes: it holds the customer's lease); absent: all. */
  mayDeliver?(customerId: string): boolean;
}

/** A delivery to start now: it begins a chain in its customer's slots. */
export interface Start {
  customerId: string;
  row: DueRow;
}

export class Scheduler {
  private readonly shares = new Map<string, CustomerShare>();
  /** What an idle customer's allowance was (its share is dropped while idle): a customer back within the second is still held to it. */
  private readonly idleAllowances = new Map<string, Allowance>();
  private readonly inFlight = new Set<string>();
  /**
   * Lanes with a delivery in flight, and which: nothing else of theirs starts meanwhile. A
   * success goes straight on to the lane's next delivery, so the lane stays busy until the
   * delivery it holds now settles.
   */
  private readonly busyLanes = new Map<string, string>();

  constructor(private readonly o: SchedulerOptions) {}

  /** The customer's rate now (its share's, else looked up). */
  rate(customerId: string): number {
    return this.shares.get(customerId)?.allowance.perS ?? this.o.rateOf(customerId);
  }

  /** Time passed: every customer is looked at again. */
  tick(): void {
    for (const share of this.shares.values()) share.dirty = true;
  }

  /** New deliveries were committed for these customers (or a new agreed rate, `rates`): look at them at the next plan. */
  wake(customers: Iterable<string>, rates: ReadonlySet<string>, now: number): void {
    for (const c of customers) {
      const share = this.share(c, now);
      share.nextDueAt = 0;
      share.dirty = true;
      if (rates.has(c)) share.allowance.resize(this.o.rateOf(c));
    }
  }

  /** Takes what the projector committed: its lanes join their customers' sets, and the rows of tracked lanes are held. */
  accept(handOff: HandOff, now: number): void {
    this.untrackLanes(handOff.untrack, now);
    for (const r of handOff.rows) {
      const key = laneKey(r.webhook_id, r.device_id);
      const lanes = this.share(r.customer_id, now).lanes;
      if (!lanes.has(key)) lanes.set(key, { webhook_id: r.webhook_id, device_id: r.device_id });
      this.o.lanes.track(key, r);
    }
  }

  /** These lanes got pending rows that memory does not hold (a replay, a redelivery, a restart): they join their customers' sets and are read. */
  untrackLanes(lanes: readonly LaneRef[], now: number): void {
    for (const l of lanes) {
      const key = laneKey(l.webhook_id, l.device_id);
      this.o.lanes.untrack(key);
      this.share(l.customer_id, now).lanes.set(key, { webhook_id: l.webhook_id, device_id: l.device_id });
    }
  }

  /**
   * The deliveries to start now, each beginning a chain of its customer's (which `chainEnded`
   * ends), within the plan limits, the in-flight bounds and the per-lane order; and the earliest
   * time a customer that had nothing to start has something due (Infinity: none waits).
   */
  plan(now: number): { starts: Start[]; wakeAt: number } {
    const starts: Start[] = [];
    let wakeAt = Number.POSITIVE_INFINITY;
    for (const [customerId, share] of this.shares) {
      if (share.nextDueAt > now) {
        wakeAt = Math.min(wakeAt, share.nextDueAt);
        continue;
      }
      if (!share.dirty) continue;
      if (this.o.mayDeliver && !this.o.mayDeliver(customerId)) continue;
      const room = Math.min(concurrencyFor(share.allowance.perS) * 2 - share.chains, MAX_IN_FLIGHT_TOTAL - this.inFlight.size);
      if (room <= 0) continue;
      // No allowance left: nothing could start, so no look (the customer stays dirty for the next plan).
      const allowed = share.allowance.room(now);
      if (allowed < 1) continue;
      share.dirty = false;
      this.discoverLanes(customerId, share, now);
      this.startHeads(customerId, share, Math.min(room, allowed), now, starts);
      if (share.nextDueAt > now) wakeAt = Math.min(wakeAt, share.nextDueAt);
      if (share.lanes.size === 0 && share.chains === 0) {
        this.shares.delete(customerId);
        this.idleAllowances.set(customerId, share.allowance);
        this.o.onIdle?.(customerId);
      }
    }
    return { starts, wakeAt };
  }

  /**
   * After a success, the lane's next due delivery, to send at once in the same chain without
   * waiting for the outcome's commit (a kill -9 meanwhile sends both again: at least once).
   * Null when the lane has nothing due, the customer has no allowance left, or `stopped`.
   * `ahead`: the chain's rows read past `done`, taken from as they go.
   */
  nextInLane(done: DueRow, ahead: QueuedDelivery[], now: number): DueRow | null {
    const share = this.shares.get(done.customer_id);
    if (!share) return null;
    if (this.o.mayDeliver && !this.o.mayDeliver(done.customer_id)) return null;
    // An endpoint disabled or changed meanwhile: the cache has its current state.
    const endpoint = this.o.endpoints.get(done.webhook_id);
    if (!endpoint?.enabled) return null;
    // Out of allowance (a customer at its plan's rate): the chain ends without reading what it could not send.
    const allowed = share.allowance.room(now);
    if (allowed < 1) {
      share.dirty = true;
      return null;
    }
    const key = laneKey(done.webhook_id, done.device_id);
    const tracked = this.o.lanes.isTracked(key);
    // No more rows than it has allowance for: a customer at its rate sends one or two per chain.
    if (!tracked && ahead.length === 0) this.o.lanes.readAhead(done, now, ahead, Math.min(READ_AHEAD_ROWS, allowed));
    const next = tracked ? this.o.lanes.trackedHead(key) : ahead[0];
    if (!next) return null;
    const row = this.claim(share, { ...next, endpoint }, now);
    if (row && !tracked) ahead.shift();
    return row;
  }

  /** A chain of the customer's ended (its last delivery is sent, or was given back). */
  chainEnded(customerId: string): void {
    const share = this.shares.get(customerId);
    if (share) share.chains -= 1;
  }

  /** Gives back a claim that is not sent: its row stays pending in the database (read from there next). */
  unclaim(row: DueRow): void {
    this.inFlight.delete(row.delivery_id);
    const key = laneKey(row.webhook_id, row.device_id);
    if (this.busyLanes.get(key) === row.delivery_id) this.busyLanes.delete(key);
    this.o.lanes.untrack(key);
  }

  /** The outcome of `row` is committed: its delivery may be picked again (a retry) or not (done). */
  settled(row: DueRow, ok: boolean): void {
    this.inFlight.delete(row.delivery_id);
    const key = laneKey(row.webhook_id, row.device_id);
    // A failed delivery stays pending in the database only.
    if (!ok) this.o.lanes.untrack(key);
    // Free the lane unless a success already went on to its next delivery.
    if (this.busyLanes.get(key) === row.delivery_id) this.busyLanes.delete(key);
    const share = this.shares.get(row.customer_id);
    if (share) share.dirty = true;
  }

  private share(customerId: string, now: number): CustomerShare {
    let share = this.shares.get(customerId);
    if (!share) {
      // A customer idle for a moment keeps its allowance: its rate, its last second of sends and its bucket.
      const kept = this.idleAllowances.get(customerId);
      this.idleAllowances.delete(customerId);
      share = {
        allowance: kept ?? new Allowance(this.o.rateOf(customerId), now),
        nextDueAt: 0,
        dirty: true,
        chains: 0,
        lanes: new Map(),
        rediscoverAt: 0,
        cursor: 0,
      };
      this.shares.set(customerId, share);
    }
    return share;
  }

  /** Every few seconds, reads the customer's whole set of lanes again (new lanes are handed over as they are queued). */
  private discoverLanes(customerId: string, share: CustomerShare, now: number): void {
    if (now < share.rediscoverAt) return;
    share.rediscoverAt = now + LANE_REDISCOVERY_MS;
    for (const r of this.o.lanes.reads.lanesOf(customerId)) {
      const key = laneKey(r.webhook_id, r.device_id);
      share.lanes.set(key, { webhook_id: r.webhook_id, device_id: r.device_id });
      // A free tracked lane with nothing in memory has nothing pending; if the database says otherwise, it is right.
      if (this.o.lanes.isTracked(key) && !this.busyLanes.has(key) && !this.o.lanes.holdsRows(key)) this.o.lanes.untrack(key);
    }
  }

  /**
   * Looks at the customer's lanes in turn from its cursor and starts the head of each free
   * one, up to `want` and while its allowance lasts. A lane whose head waits for a retry (with
   * fewer than LANE_HOLDING_ATTEMPTS failures) is held; failures past that are passed over.
   * When nothing could start, the customer sleeps until its earliest retry.
   */
  private startHeads(customerId: string, share: CustomerShare, want: number, now: number, starts: Start[]): void {
    const keys = [...share.lanes.keys()];
    let started = 0;
    let earliest = Number.POSITIVE_INFINITY;
    let looked = 0;
    for (; looked < keys.length && started < want; looked++) {
      const key = keys[(share.cursor + looked) % keys.length]!;
      if (this.busyLanes.has(key)) continue;
      const head = this.o.lanes.head(share.lanes.get(key)!, now);
      if (head === null) {
        share.lanes.delete(key);
        continue;
      }
      if ('waitUntil' in head) {
        earliest = Math.min(earliest, head.waitUntil);
        continue;
      }
      const row = this.claim(share, head.due, now);
      if (!row) break;
      started += 1;
      share.chains += 1;
      starts.push({ customerId, row });
    }
    share.cursor = keys.length > 0 ? (share.cursor + looked) % keys.length : 0;
    // Lanes left unlooked at (want reached) are looked at on the next plan.
    if (looked < keys.length) share.dirty = true;
    else if (started === 0 && share.chains === 0) share.nextDueAt = Number.isFinite(earliest) ? earliest : 0;
  }

  /** Takes one of the customer's allowance for `row` and marks it in flight, holding its lane (a tracked row leaves memory); null (customer left dirty) without allowance. */
  private claim(share: CustomerShare, row: DueRow, now: number): DueRow | null {
    if (!share.allowance.take(now)) {
      share.dirty = true;
      return null;
    }
    this.inFlight.add(row.delivery_id);
    const key = laneKey(row.webhook_id, row.device_id);
    this.busyLanes.set(key, row.delivery_id);
    // A tracked lane's row (always its first in memory) leaves memory as it starts.
    if (this.o.lanes.isTracked(key)) this.o.lanes.takeTrackedHead(key);
    return row;
  }
}
