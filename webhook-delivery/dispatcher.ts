/**
 * Sends queued deliveries: the side-effect half of webhooks (the projector
 * fills the queue). Per customer, a sliding window on the injected clock holds
 * the plan's deliveries per second exactly (send-window.ts; excess waits in the
 * queue, nothing is dropped), a token bucket spreads them over the second, and
 * a p-queue bounds requests in flight, and its connections come
 * from keep-alive agents of its own, so one customer's slow or dead receiver
 * only ever occupies that customer's slots and sockets (even when another
 * customer's endpoints are on the same host).
 *
 * Order: the deliveries of one (endpoint, device) lane leave one at a time in
 * log order, and a failed one holds the lane until it succeeds, so a receiver
 * that was down gets everything in order once it is back. A delivery that
 * failed `LANE_HOLDING_ATTEMPTS` times (its next retry is half an hour or more
 * away) stops holding its lane: one bad event does not stop a device's others
 * for days. Retries follow the schedule of retry-schedule.ts. Outcomes are written in batches, and a
 * delivery stays "due" in the database until its outcome is committed, so a
 * kill -9 re-sends only what was in flight.
 *
 * The pump works lane by lane: each customer keeps the set of its lanes with
 * pending deliveries (new ones handed over by the projector, and all of them
 * read again every few seconds), and reads only the first rows of each lane.
 * A pump costs what it starts, not the backlog: a receiver that was down for
 * an hour does not make every pump read the hour.
 *
 * Most lanes need no read at all: the projector hands over the rows it queued
 * once they are committed (`accept`), and while every pending row of a lane is
 * one of those ("tracked"), they are sent from memory. A lane stops being
 * tracked when something puts rows in it that memory does not hold (a failed
 * attempt stays pending, a redelivery or replay, its endpoint disabled, the
 * memory cap, a restart); it is tracked again once a read finds it empty.
 * The database stays the record: a delivery is pending there until its
 * outcome is committed, whatever memory holds.
 */
import type Database from 'better-sqlite3';
import PQueue from 'p-queue';
import type { Clock } from '../core/clock.js';
import type { EventStore } from '../core/event-store/port.js';
import type { Plan } from '../core/events.js';
import type { Logger } from '../core/logger.js';
import type { SecretBox } from '../core/secret-box.js';
import { availableTokens, fullBucket, take, type BucketLimits, type BucketState } from '../core/token-bucket.js';
import type { HandOff, LaneRef, QueuedDelivery } from '../core/webhook-queue.js';
import { previousSecretIn, type EndpointCache, type SendableEndpoint } from './endpoint-cache.js';
import { EndpointDisabler } from './endpoint-disable.js';
import { createWebhookAgents, type AttemptResult, type WebhookAgents } from './post-attempt.js';
import { honoursRetryAfter, nextAttemptDelayMs, parseRetryAfter } from './retry-schedule.js';
import { sendSigned } from './send.js';
import { SendWindow } from './send-window.js';
import { guardedLookup, type WebhookLookup } from './url-safety.js';
import { boundLimit } from '../core/sqlite-limit.js';

/** Deliveries per second by plan; Enterprise is agreed per customer (`fleet customer set-webhook-limit`), FLEET_WEBHOOK_ENTERPRISE_PER_S without an agreement. */
export const PLAN_DELIVERIES_PER_S: Record<Exclude<Plan, 'enterprise'>, number> = { free: 10, pro: 100 };
/** An endpoint whose every attempt failed for this long is disabled (the retry schedule spans about 3 days). */
export const FAILING_DISABLE_MS = 3 * 24 * 3_600_000;
/** Delivered, failed and cancelled deliveries (and their attempts) are kept this long for GET .../deliveries. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3_600_000;
const TICK_MS = 50;
const FLUSH_MS = 25;
const MAX_IN_FLIGHT_TOTAL = 4096;
/** Rows of a lane read per page past its head: the non-holding failures it may pass over. */
const LANE_HEAD_ROWS = 16;
/** Rows of a lane a delivery chain reads at once (after a success it goes on with the next). */
const READ_AHEAD_ROWS = 8;
/** How often a customer's whole set of lanes is read again (endpoints enabled again, anything memory missed). */
const LANE_REDISCOVERY_MS = 5_000;
/** Queued rows held in memory for tracked lanes, at most (about a kilobyte each); past it, lanes fall back to reads. */
const TRACKED_ROWS_MAX = 50_000;
/** A pending delivery with fewer failed attempts than this holds back the later ones of its lane (about 35 minutes of outage). */
export const LANE_HOLDING_ATTEMPTS = 3;

/**
 * A customer's bucket: `perS` a second, at most a quarter of a second's worth at once. It only
 * spreads the sends; the send window holds the limit (a bucket that small loses refills during a
 * pause of the thread, one big enough not to would let two seconds' worth into one).
 */
function bucketLimits(perS: number): BucketLimits {
  return { capacity: Math.max(1, Math.ceil(perS / 4)), perMinute: perS * 60 };
}

/** The deliveries a customer may start now: what both its bucket and its send window allow. */
function wholeTokens(lane: { bucket: BucketState; window: SendWindow; perS: number }, now: number): number {
  return Math.min(Math.floor(availableTokens(lane.bucket, bucketLimits(lane.perS), now) + 1e-9), lane.window.room(now));
}

/** Requests (and sockets per receiver host) in flight for one customer: enough to reach its rate against a slow receiver, bounded so sockets stay few. */
function concurrencyFor(perS: number): number {
  return Math.min(Math.max(perS, 4), 256);
}

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
}

type PendingRow = QueuedDelivery;

/** A pending delivery as a lane's look reads it, with what sending it takes (its endpoint from the cache). */
interface DueRow extends PendingRow {
  endpoint: SendableEndpoint;
}

export interface Outcome {
  row: DueRow;
  attempt: number;
  at: number;
  result: AttemptResult;
}

interface CustomerLane {
  /** Nothing of this customer is due before this time (0: look now). */
  nextDueAt: number;
  /**
   * Something may have changed since its last scan: new deliveries, an outcome committed, tokens
   * it ran out of, or time (every tick marks all). A pump between ticks scans only these.
   */
  dirty: boolean;
  bucket: BucketState;
  /** The plan limit: at most `perS` sends in any second. */
  window: SendWindow;
  perS: number;
  queue: PQueue;
  /** Lanes (endpoint, device) that had pending deliveries at the last look, by `laneKey`. */
  lanes: Map<string, { webhook_id: string; device_id: string }>;
  /** When the whole lane set is read again. */
  rediscoverAt: number;
  /** Where the next pump starts in the lane set, so no lane always comes last. */
  cursor: number;
}

const laneKey = (webhookId: string, deviceId: string) => `${webhookId}\u0000${deviceId}`;

export class WebhookDispatcher {
  private readonly customers = new Map<string, CustomerLane>();
  /** What an idle customer's limits were (its lane is dropped while idle): a customer back within the second is still held to it. */
  private readonly idleLimits = new Map<string, Pick<CustomerLane, 'perS' | 'bucket' | 'window'>>();
  private readonly inFlight = new Set<string>();
  /**
   * Lanes with a delivery in flight, and which: nothing else of theirs starts meanwhile. A
   * success goes straight on to the lane's next delivery (attempt), so the lane stays busy
   * until the delivery it holds now settles.
   */
  private readonly busyLanes = new Map<string, string>();
  private readonly outcomes: Outcome[] = [];
  /** Tracked lanes' pending rows not yet started, in order, by `laneKey` (see the module comment). */
  private readonly trackedRows = new Map<string, PendingRow[]>();
  private trackedRowCount = 0;
  /** Lanes whose pending rows memory may not hold: they are read from the database. */
  private readonly untracked = new Set<string>();
  private readonly openedSecrets = new Map<string, string>();
  /** Endpoints whose `failing_since` is set (this dispatcher is the only one that sets it); a success clears it. */
  private readonly failingEndpoints: Set<string>;
  private readonly q;
  private readonly disabler: EndpointDisabler;
  /** Each customer's connection pools (kept while the dispatcher runs: idle sockets close by themselves). */
  private readonly agents = new Map<string, WebhookAgents>();
  private readonly lookup: WebhookLookup;
  private readonly random: () => number;
  private timer: NodeJS.Timeout | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  private pumpScheduled = false;
  private stopped = false;
  private lastPrune = 0;
  stats = { attempts: 0, delivered: 0, failedAttempts: 0 };

  constructor(private readonly o: DispatcherOptions) {
    this.lookup = guardedLookup(o.allowPrivate);
    this.random = o.random ?? Math.random;
    const db = o.db;
    this.q = {
      // A lane's first pending rows, in order (index wh_lane), with their bodies.
      laneHead: db.prepare(
        `SELECT seq, delivery_id, webhook_id, customer_id, device_id, event_id, kind, attempts, next_attempt_at, body
         FROM wh_deliveries WHERE webhook_id = ? AND device_id = ? AND next_attempt_at IS NOT NULL AND seq > ?
         ORDER BY seq LIMIT ${boundLimit()}`,
      ),
      // Every lane with pending deliveries, of a customer (by its endpoints) and of all (index wh_lane both).
      allLanes: db.prepare(
        `SELECT DISTINCT webhook_id, device_id FROM wh_deliveries
         WHERE webhook_id IN (SELECT webhook_id FROM wh_endpoints WHERE customer_id = ?) AND next_attempt_at IS NOT NULL`,
      ),
      pendingLanes: db.prepare('SELECT DISTINCT customer_id, webhook_id, device_id FROM wh_deliveries WHERE next_attempt_at IS NOT NULL'),
      limit: db.prepare('SELECT plan, per_s FROM wh_customers WHERE customer_id = ?'),
      insertAttempt: db.prepare(
        'INSERT OR REPLACE INTO wh_attempts (delivery_id, attempt, at, status, error, latency_ms, response_start) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      // The latest attempt is on the delivery's row; wh_attempts gets a row for a failed one only (delivery-db.ts).
      settle: db.prepare(
        `UPDATE wh_deliveries SET attempts = ?, state = ?, next_attempt_at = ?, last_attempt_at = ?, last_status = ?, last_error = ?,
           last_latency_ms = ?, last_response_start = ? WHERE seq = ?`,
      ),
      // Only an endpoint that was failing is written (failingEndpoints): a success is no write of its own on the delivery path.
      failingNow: db.prepare('SELECT webhook_id FROM wh_endpoints WHERE failing_since IS NOT NULL').pluck(),
      healthy: db.prepare('UPDATE wh_endpoints SET failing_since = NULL WHERE webhook_id = ? AND failing_since IS NOT NULL'),
      failing: db.prepare('UPDATE wh_endpoints SET failing_since = coalesce(failing_since, ?) WHERE webhook_id = ? RETURNING failing_since, enabled').pluck(false),
      prune: db.prepare('DELETE FROM wh_deliveries WHERE next_attempt_at IS NULL AND created_at < ? RETURNING delivery_id').pluck(),
      pruneAttempts: db.prepare('DELETE FROM wh_attempts WHERE delivery_id = ?'),
    };
    this.failingEndpoints = new Set(this.q.failingNow.all() as string[]);
    this.disabler = new EndpointDisabler(db, o.endpoints, o);
  }

  start(): void {
    // What was pending before this start is only in the database.
    this.untrackLanes(this.q.pendingLanes.all() as LaneRef[]);
    this.disabler.announceLeftOver();
    this.timer = setInterval(() => {
      for (const lane of this.customers.values()) lane.dirty = true;
      this.pump();
    }, TICK_MS);
    this.timer.unref();
    this.pump();
  }

  /** New deliveries were committed for these customers (or a new agreed rate, `rates`): look at them now rather than at the next tick. */
  wake(customers: Iterable<string>, rates: ReadonlySet<string> = new Set()): void {
    for (const c of customers) {
      const lane = this.lane(c);
      lane.nextDueAt = 0;
      lane.dirty = true;
      if (!rates.has(c)) continue;
      lane.perS = this.perSecond(c);
      lane.window = lane.window.resized(lane.perS);
      lane.queue.concurrency = concurrencyFor(lane.perS);
      this.agents.get(c)?.resize(concurrencyFor(lane.perS));
    }
    this.schedulePump();
  }

  /** Takes what the projector committed: its lanes join their customers' sets, and the rows of tracked lanes are held. */
  accept(handOff: HandOff): void {
    this.untrackLanes(handOff.untrack);
    for (const r of handOff.rows) {
      const key = laneKey(r.webhook_id, r.device_id);
      const lanes = this.lane(r.customer_id).lanes;
      if (!lanes.has(key)) lanes.set(key, { webhook_id: r.webhook_id, device_id: r.device_id });
      if (this.untracked.has(key)) continue;
      if (this.trackedRowCount >= TRACKED_ROWS_MAX) {
        this.untrack(key);
        continue;
      }
      let rows = this.trackedRows.get(key);
      if (!rows) {
        rows = [];
        this.trackedRows.set(key, rows);
      }
      rows.push(r);
      this.trackedRowCount += 1;
    }
    this.wake(handOff.customers, handOff.rates);
  }

  /** These lanes got pending rows that memory does not hold (a replay, a redelivery, a restart): they join their customers' sets and are read. */
  untrackLanes(lanes: readonly LaneRef[]): void {
    for (const l of lanes) {
      const key = laneKey(l.webhook_id, l.device_id);
      this.untrack(key);
      this.lane(l.customer_id).lanes.set(key, { webhook_id: l.webhook_id, device_id: l.device_id });
    }
  }

  /** The lane's pending rows are to be read from the database from now on (until a read finds it empty). */
  private untrack(key: string): void {
    this.untracked.add(key);
    const rows = this.trackedRows.get(key);
    if (rows) {
      this.trackedRowCount -= rows.length;
      this.trackedRows.delete(key);
    }
  }

  /** The customer's agreed rate, else its plan's (Enterprise without an agreement: the configured default). */
  private perSecond(customerId: string): number {
    const row = this.q.limit.get(customerId) as { plan: Plan; per_s: number | null } | undefined;
    if (row?.per_s) return row.per_s;
    const plan = row?.plan ?? 'free';
    return plan === 'enterprise' ? this.o.enterprisePerS : PLAN_DELIVERIES_PER_S[plan];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.all([...this.customers.values()].map((c) => c.queue.onIdle()));
    this.flush();
    for (const agents of this.agents.values()) agents.destroy();
  }

  private lane(customerId: string): CustomerLane {
    let lane = this.customers.get(customerId);
    if (!lane) {
      // A customer idle for a moment keeps its rate, its last second of sends and its bucket.
      const kept = this.idleLimits.get(customerId);
      this.idleLimits.delete(customerId);
      const perS = kept?.perS ?? this.perSecond(customerId);
      lane = {
        nextDueAt: 0,
        dirty: true,
        perS,
        bucket: kept?.bucket ?? fullBucket(bucketLimits(perS), this.o.clock.now()),
        window: kept?.window ?? new SendWindow(perS),
        queue: new PQueue({ concurrency: concurrencyFor(perS) }),
        lanes: new Map(),
        rediscoverAt: 0,
        cursor: 0,
      };
      this.customers.set(customerId, lane);
    }
    return lane;
  }

  private schedulePump(): void {
    if (this.pumpScheduled || this.stopped) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Starts every due delivery that the plan limits, the in-flight bounds and the per-lane order allow. */
  private pump(): void {
    if (this.stopped) return;
    const now = this.o.clock.now();
    for (const [customerId, lane] of this.customers) {
      if (lane.nextDueAt > now || !lane.dirty) continue;
      const room = Math.min(lane.queue.concurrency * 2 - lane.queue.size - lane.queue.pending, MAX_IN_FLIGHT_TOTAL - this.inFlight.size);
      if (room <= 0) continue;
      // No token: nothing could start, so no look (the customer stays dirty for the next pump).
      const tokens = wholeTokens(lane, now);
      if (tokens < 1) continue;
      lane.dirty = false;
      this.discoverLanes(customerId, lane, now);
      this.startHeads(lane, Math.min(room, tokens), now);
      if (lane.lanes.size === 0 && lane.queue.size === 0 && lane.queue.pending === 0) {
        this.customers.delete(customerId);
        this.idleLimits.set(customerId, { perS: lane.perS, bucket: lane.bucket, window: lane.window });
      }
    }
    if (now - this.lastPrune > 600_000) this.prune(now);
  }

  /** Every few seconds, reads the customer's whole set of lanes again (new lanes are handed over as they are queued). */
  private discoverLanes(customerId: string, lane: CustomerLane, now: number): void {
    if (now < lane.rediscoverAt) return;
    lane.rediscoverAt = now + LANE_REDISCOVERY_MS;
    for (const r of this.q.allLanes.all(customerId) as Array<{ webhook_id: string; device_id: string }>) {
      const key = laneKey(r.webhook_id, r.device_id);
      lane.lanes.set(key, { webhook_id: r.webhook_id, device_id: r.device_id });
      // A free tracked lane with nothing in memory has nothing pending; if the database says otherwise, it is right.
      if (!this.untracked.has(key) && !this.busyLanes.has(key) && !this.trackedRows.has(key)) this.untrack(key);
    }
  }

  /**
   * Looks at the customer's lanes in turn from its cursor and starts the head of each free
   * one, up to `want` and while its tokens last. A lane whose head waits for a retry (with
   * fewer than LANE_HOLDING_ATTEMPTS failures) is held; failures past that are passed over.
   * When nothing could start, the customer sleeps until its earliest retry.
   */
  private startHeads(lane: CustomerLane, want: number, now: number): void {
    const keys = [...lane.lanes.keys()];
    let started = 0;
    let earliest = Number.POSITIVE_INFINITY;
    let looked = 0;
    for (; looked < keys.length && started < want; looked++) {
      const key = keys[(lane.cursor + looked) % keys.length]!;
      if (this.busyLanes.has(key)) continue;
      const head = this.laneHead(lane.lanes.get(key)!, now);
      if (head === null) {
        lane.lanes.delete(key);
        continue;
      }
      if ('waitUntil' in head) {
        earliest = Math.min(earliest, head.waitUntil);
        continue;
      }
      const row = this.claim(lane, head.due, now);
      if (!row) break;
      started += 1;
      void lane.queue.add(() => this.attempt(row));
    }
    lane.cursor = keys.length > 0 ? (lane.cursor + looked) % keys.length : 0;
    // Lanes left unlooked at (want reached) are looked at on the next pump.
    if (looked < keys.length) lane.dirty = true;
    else if (started === 0 && lane.queue.size === 0 && lane.queue.pending === 0) lane.nextDueAt = Number.isFinite(earliest) ? earliest : 0;
  }

  /**
   * The lane's head: a tracked lane's first row in memory, else laneHeadOf of its rows read on past
   * pages of passed-over failures; null when the lane has nothing pending. The first read is of one
   * row: almost always it is due, or holds the lane.
   */
  private laneHead(l: { webhook_id: string; device_id: string }, now: number): { due: DueRow } | { waitUntil: number } | null {
    const key = laneKey(l.webhook_id, l.device_id);
    // A disabled or deleted endpoint's lanes have nothing to send (enabling it again rediscovers them).
    const endpoint = this.o.endpoints.get(l.webhook_id);
    if (!endpoint?.enabled) {
      this.untrack(key);
      return null;
    }
    if (!this.untracked.has(key)) {
      // Tracked: every pending row of the lane is in memory, and the lane is free, so none is in flight.
      const first = this.trackedRows.get(key)?.[0];
      return first ? { due: { ...first, endpoint } } : null;
    }
    let after = 0;
    let waitUntil = Number.POSITIVE_INFINITY;
    for (let page = 1; ; page = LANE_HEAD_ROWS) {
      const rows = this.q.laneHead.all(l.webhook_id, l.device_id, after, page) as PendingRow[];
      if (rows.length === 0 && after === 0) {
        // Nothing pending at all, and nothing in flight (the lane is free): memory can hold what comes next.
        this.untracked.delete(key);
        return null;
      }
      if (rows.length === 0) return { waitUntil };
      const head = laneHeadOf(rows, now);
      if ('due' in head) return { due: { ...head.due, endpoint } };
      if (head.held || rows.length < page) return { waitUntil: Math.min(waitUntil, head.waitUntil) };
      waitUntil = Math.min(waitUntil, head.waitUntil);
      after = rows[rows.length - 1]!.seq;
    }
  }

  /**
   * Sends `first`, and after each success the lane's next due delivery, in this one slot of the
   * customer's queue. The lane's following rows are read a few at a time (`ahead`), not one query
   * per delivery: while this chain runs the lane is busy, so nothing else sends them meanwhile.
   */
  private async attempt(first: DueRow): Promise<void> {
    const ahead: PendingRow[] = [];
    for (let row: DueRow | null = first; row; ) {
      const ok = await this.attemptOne(row);
      row = ok ? this.nextInLane(row, ahead) : null;
    }
  }

  /** One signed attempt; its outcome joins the next batch commit. Returns whether it succeeded. */
  private async attemptOne(row: DueRow): Promise<boolean> {
    // Claimed before a 410 (on another lane) disabled its endpoint: it stays pending, unsent.
    if (!this.o.endpoints.get(row.webhook_id)?.enabled) return this.unclaim(row);
    const now = this.o.clock.now();
    const attempt = row.attempts + 1;
    const previous = previousSecretIn(row.endpoint, now);
    let result: AttemptResult;
    try {
      result = await sendSigned(
        {
          url: row.endpoint.url,
          body: Buffer.from(row.body),
          kind: row.kind,
          eventId: row.event_id,
          deliveryId: row.delivery_id,
          attempt,
          secret: this.open(row.endpoint.secret),
          previousSecret: previous === null ? null : this.open(previous),
          nowMs: now,
        },
        { lookup: this.lookup, agents: this.agentsOf(row.customer_id) },
      );
    } catch (err) {
      // A secret that does not open (another server key) is a configuration fault: retried like a failure.
      this.o.log.error({ err, webhook: row.webhook_id }, 'webhook attempt could not be made');
      result = { ok: false, status: null, latencyMs: 0, responseBodyStart: '', error: 'request_failed' };
    }
    this.outcomes.push({ row, attempt, at: now, result });
    this.stats.attempts += 1;
    if (result.ok) this.stats.delivered += 1;
    else this.stats.failedAttempts += 1;
    // A 410 is committed now, disabling its endpoint before anything else of it starts.
    if (result.status === 410) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS);
    return result.ok;
  }

  /** Gives back a claim that is not sent: its row stays pending in the database (read from there next). */
  private unclaim(row: DueRow): false {
    this.inFlight.delete(row.delivery_id);
    const key = laneKey(row.webhook_id, row.device_id);
    if (this.busyLanes.get(key) === row.delivery_id) this.busyLanes.delete(key);
    this.untrack(key);
    return false;
  }

  /**
   * After a success, the lane's next due delivery, started at once in the same slot without
   * waiting for the outcome's commit (a kill -9 meanwhile sends both again: at least once).
   * Null when the lane has nothing due, the customer has no token, or delivery stops.
   */
  private nextInLane(done: DueRow, ahead: PendingRow[]): DueRow | null {
    const lane = this.customers.get(done.customer_id);
    if (this.stopped || !lane) return null;
    // An endpoint disabled or changed meanwhile: the cache has its current state.
    const endpoint = this.o.endpoints.get(done.webhook_id);
    if (!endpoint?.enabled) return null;
    const now = this.o.clock.now();
    // Out of tokens (a customer at its plan's rate): the chain ends without reading what it could not send.
    const tokens = wholeTokens(lane, now);
    if (tokens < 1) {
      lane.dirty = true;
      return null;
    }
    const key = laneKey(done.webhook_id, done.device_id);
    const tracked = !this.untracked.has(key);
    // No more rows than it has tokens for: a customer at its rate sends one or two per chain.
    if (!tracked && ahead.length === 0) this.readAhead(done, now, ahead, Math.min(READ_AHEAD_ROWS, tokens));
    const next = tracked ? this.trackedRows.get(key)?.[0] : ahead[0];
    if (!next) return null;
    const row = this.claim(lane, { ...next, endpoint }, now);
    if (row && !tracked) ahead.shift();
    return row;
  }

  /**
   * The lane's rows after `done` that can go now, in order, as laneHeadOf decides: due rows
   * are taken, passed-over failures skipped, and a held row (or the end of a page) stops.
   * A row due now stays due (only its own attempt changes it), so these may be sent later in the chain.
   */
  private readAhead(done: DueRow, now: number, ahead: PendingRow[], limit: number): void {
    const rows = this.q.laneHead.all(done.webhook_id, done.device_id, done.seq, limit) as PendingRow[];
    for (const r of rows) {
      const place = placeInLane(r, now);
      if (place === 'due') ahead.push(r);
      else if (place === 'holds') return;
    }
  }

  /** A tracked lane's first row was started: it leaves memory. */
  private takeTrackedHead(key: string): void {
    const rows = this.trackedRows.get(key)!;
    rows.shift();
    this.trackedRowCount -= 1;
    if (rows.length === 0) this.trackedRows.delete(key);
  }

  /** Takes a token of the customer for `row` and marks it in flight, holding its lane (a tracked row leaves memory); null (customer left dirty) without a token. */
  private claim(lane: CustomerLane, row: DueRow, now: number): DueRow | null {
    if (lane.window.room(now) < 1 || !take(lane.bucket, bucketLimits(lane.perS), now).allowed) {
      lane.dirty = true;
      return null;
    }
    lane.window.take(now);
    this.inFlight.add(row.delivery_id);
    const key = laneKey(row.webhook_id, row.device_id);
    this.busyLanes.set(key, row.delivery_id);
    // A tracked lane's row (always its first in memory) leaves memory as it starts.
    if (!this.untracked.has(key)) this.takeTrackedHead(key);
    return row;
  }

  private agentsOf(customerId: string): WebhookAgents {
    let agents = this.agents.get(customerId);
    if (!agents) {
      agents = createWebhookAgents({ maxSocketsPerOrigin: concurrencyFor(this.customers.get(customerId)?.perS ?? this.perSecond(customerId)) });
      this.agents.set(customerId, agents);
    }
    return agents;
  }

  private open(sealed: string): string {
    let secret = this.openedSecrets.get(sealed);
    if (secret === undefined) {
      secret = this.o.box.open(sealed);
      this.openedSecrets.set(sealed, secret);
    }
    return secret;
  }

  /** Commits a batch of outcomes, then lets their deliveries be picked again (a retry) or not (done). */
  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const batch = this.outcomes.splice(0);
    if (batch.length === 0) return;
    this.o.db.transaction(() => {
      for (const o of batch) {
        const { row, result } = o;
        const responseStart = result.responseBodyStart.slice(0, 1024);
        if (!result.ok) this.q.insertAttempt.run(row.delivery_id, o.attempt, o.at, result.status, result.error, Math.round(result.latencyMs), responseStart);
        let state = 'delivered';
        let next: number | null = null;
        if (result.ok) {
          if (this.failingEndpoints.delete(row.webhook_id)) this.q.healthy.run(row.webhook_id);
        } else if (result.status === 410) {
          state = 'failed';
          this.disabler.disable(row, 'gone', 'The receiver answered 410 Gone.', o.at);
        } else {
          const retryAfter = honoursRetryAfter(result.status) ? parseRetryAfter(result.retryAfter, o.at) : undefined;
          const delay = nextAttemptDelayMs(o.attempt, this.random, retryAfter);
          state = delay === null ? 'failed' : 'pending';
          next = delay === null ? null : o.at + delay;
          this.failingEndpoints.add(row.webhook_id);
          const health = this.q.failing.get(o.at, row.webhook_id) as { failing_since: number; enabled: number } | undefined;
          if (health && health.enabled && o.at - health.failing_since >= FAILING_DISABLE_MS) {
            this.disabler.disable(row, 'failing', `Every attempt failed since ${new Date(health.failing_since).toISOString()}.`, o.at);
          }
        }
        this.q.settle.run(o.attempt, state, next, o.at, result.status, result.error, Math.round(result.latencyMs), responseStart, row.seq);
      }
    }).immediate();
    for (const o of batch) {
      this.inFlight.delete(o.row.delivery_id);
      const key = laneKey(o.row.webhook_id, o.row.device_id);
      // A failed delivery stays pending in the database only.
      if (!o.result.ok) this.untrack(key);
      // Free the lane unless a success already went on to its next delivery.
      if (this.busyLanes.get(key) === o.row.delivery_id) this.busyLanes.delete(key);
      const customer = this.customers.get(o.row.customer_id);
      if (customer) customer.dirty = true;
    }
    this.o.onOutcome?.(batch);
    this.disabler.announce();
    this.schedulePump();
  }

  /** Keeps the delivery log bounded: settled deliveries older than the retention go with their attempts. */
  private prune(now: number): void {
    this.lastPrune = now;
    this.o.db.transaction(() => {
      for (const id of this.q.prune.all(now - DELIVERY_RETENTION_MS) as string[]) this.q.pruneAttempts.run(id);
    }).immediate();
  }
}

/**
 * The order rule for one pending row of a lane: due now (it may go), waiting for a retry
 * with fewer than LANE_HOLDING_ATTEMPTS failures (it holds the rows after it), or waiting
 * after more (passed over: the rows after it go).
 */
function placeInLane(r: { attempts: number; next_attempt_at: number }, now: number): 'due' | 'holds' | 'passed' {
  if (r.next_attempt_at <= now) return 'due';
  return r.attempts < LANE_HOLDING_ATTEMPTS ? 'holds' : 'passed';
}

/**
 * What a lane (its first pending rows, in order) offers now: the delivery to start, or the
 * time to look again. A row due now goes; a row waiting for a retry with fewer than
 * LANE_HOLDING_ATTEMPTS failures holds the lane; one with more is passed over.
 */
export function laneHeadOf<R extends { attempts: number; next_attempt_at: number }>(
  rows: readonly R[],
  now: number,
): { due: R } | { waitUntil: number; held: boolean } {
  let waitUntil = Number.POSITIVE_INFINITY;
  for (const r of rows) {
    const place = placeInLane(r, now);
    if (place === 'due') return { due: r };
    waitUntil = Math.min(waitUntil, r.next_attempt_at);
    if (place === 'holds') return { waitUntil, held: true };
  }
  // Only passed-over failures among these rows: the lane's later rows decide.
  return { waitUntil, held: false };
}
