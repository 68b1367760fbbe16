/**
 * Lanes: the deliveries of one (endpoint, device) pair, which leave one at a time in
 * log order. A failed one holds its lane until it succeeds, so a receiver that was
 * down gets everything in order once it is back; one that failed
 * `LANE_HOLDING_ATTEMPTS` times (its next retry half an hour or more away) stops
 * holding it, so one bad event does not stop a device's others for days.
 *
 * Most lanes need no read at all: the projector hands over the rows it queued once
 * they are committed, and while every pending row of a lane is one of those
 * ("tracked"), they are sent from memory. A lane stops being tracked when something
 * puts rows in it that memory does not hold (a failed attempt stays pending, a
 * redelivery or replay, its endpoint disabled, the memory cap, a restart); it is
 * tracked again once a read finds it empty. The database stays the record: a
 * delivery is pending there until its outcome is committed, whatever memory holds.
 */
import type { LaneRef, QueuedDelivery } from '../core/webhook-queue.js';
import type { SendableEndpoint } from './endpoint-cache.js';

/** A pending delivery with fewer failed attempts than this holds back the later ones of its lane (about 35 minutes of outage). */
export const LANE_HOLDING_ATTEMPTS = 3;
/** Rows of a lane read per page past its head: the non-holding failures it may pass over. */
const LANE_HEAD_ROWS = 16;
/** Queued rows held in memory for tracked lanes, at most (about a kilobyte each); past it, lanes fall back to reads. */
const TRACKED_ROWS_MAX = 50_000;

/** A pending delivery with what sending it takes: its endpoint, from the cache. */
export interface DueRow extends QueuedDelivery {
  endpoint: SendableEndpoint;
}

export type Lane = Pick<LaneRef, 'webhook_id' | 'device_id'>;

export const laneKey = (webhookId: string, deviceId: string): string => `${webhookId}\u0000${deviceId}`;

/** What the queue's database tells of lanes (delivery-db.ts's `laneReads`; tests hold rows in memory). */
export interface LaneReads {
  /** The lane's pending rows after `afterSeq`, in order, at most `limit`. */
  rowsAfter(lane: Lane, afterSeq: number, limit: number): QueuedDelivery[];
  /** Every lane of the customer's endpoints with pending deliveries. */
  lanesOf(customerId: string): Lane[];
  /** Every lane with pending deliveries. */
  pendingLanes(): LaneRef[];
}

/** The endpoints as sends need them (endpoint-cache.ts). */
export interface Endpoints {
  get(webhookId: string): SendableEndpoint | null;
}

/** The pending rows of every lane: from memory while tracked, else read. */
export class LaneQueues {
  /** Tracked lanes' pending rows not yet started, in order, by `laneKey`. */
  private readonly trackedRows = new Map<string, QueuedDelivery[]>();
  private trackedRowCount = 0;
  /** Lanes whose pending rows memory may not hold: they are read from the database. */
  private readonly untracked = new Set<string>();

  constructor(
    readonly reads: LaneReads,
    private readonly endpoints: Endpoints,
  ) {}

  isTracked(key: string): boolean {
    return !this.untracked.has(key);
  }

  /** Whether memory holds rows of the lane. */
  holdsRows(key: string): boolean {
    return this.trackedRows.has(key);
  }

  /** A row the projector committed: held while its lane is tracked and memory has room. */
  track(key: string, row: QueuedDelivery): void {
    if (this.untracked.has(key)) return;
    if (this.trackedRowCount >= TRACKED_ROWS_MAX) {
      this.untrack(key);
      return;
    }
    let rows = this.trackedRows.get(key);
    if (!rows) {
      rows = [];
      this.trackedRows.set(key, rows);
    }
    rows.push(row);
    this.trackedRowCount += 1;
  }

  /** The lane's pending rows are to be read from the database from now on (until a read finds it empty). */
  untrack(key: string): void {
    this.untracked.add(key);
    const rows = this.trackedRows.get(key);
    if (rows) {
      this.trackedRowCount -= rows.length;
      this.trackedRows.delete(key);
    }
  }

  /** A tracked lane's first row was started: it leaves memory. */
  takeTrackedHead(key: string): void {
    const rows = this.trackedRows.get(key)!;
    rows.shift();
    this.trackedRowCount -= 1;
    if (rows.length === 0) this.trackedRows.delete(key);
  }

  /** A tracked lane's first row in memory. */
  trackedHead(key: string): QueuedDelivery | undefined {
    return this.trackedRows.get(key)?.[0];
  }

  /**
   * The head of a free lane: a tracked lane's first row in memory, else laneHeadOf of its rows read on
   * past pages of passed-over failures; null when the lane has nothing pending. The first read is of one
   * row: almost always it is due, or holds the lane.
   */
  head(l: Lane, now: number): { due: DueRow } | { waitUntil: number } | null {
    const key = laneKey(l.webhook_id, l.device_id);
    // A disabled or deleted endpoint's lanes have nothing to send (enabling it again rediscovers them).
    const endpoint = this.endpoints.get(l.webhook_id);
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
      const rows = this.reads.rowsAfter(l, after, page);
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
   * The lane's rows after `done` that can go now, in order, as laneHeadOf decides: due rows
   * are taken, passed-over failures skipped, and a held row (or the end of a page) stops.
   * A row due now stays due (only its own attempt changes it), so these may be sent later in the chain.
   */
  readAhead(done: QueuedDelivery, now: number, ahead: QueuedDelivery[], limit: number): void {
    for (const r of this.reads.rowsAfter(done, done.seq, limit)) {
      const place = placeInLane(r, now);
      if (place === 'due') ahead.push(r);
      else if (place === 'holds') return;
    }
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
