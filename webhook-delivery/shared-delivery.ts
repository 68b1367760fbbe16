/**
 * Webhook delivery as competing consumers, for nodes sharing a PostgreSQL (core/coordination). Every
 * node queues every delivery from the shared log; a node sends a customer's only while it holds the
 * customer's lease, so two nodes never send the same attempt at once and the customer's plan rate
 * holds. Leases last LEASE_TTL_MS and are renewed every ROUND_MS; a node starts an attempt only
 * while its lease outlasts the attempt's timeout, so a lapsed lease has no attempt left in flight.
 * A dead node's customers are taken by the others once its leases lapse.
 *
 * The holder publishes each committed outcome; the others apply them to their own queues (so their
 * deliveries lists agree), and a node taking a customer over first catches up with the log and
 * applies the outcomes of its pending deliveries, so it goes on where the last holder stopped: in
 * order per lane, at least once (an attempt whose outcome was not published is sent again).
 */
import type Database from 'better-sqlite3';
import { performance } from 'node:perf_hooks';
import type { Coordination, SharedOutcome } from '../core/coordination/port.js';
import type { Logger } from '../core/logger.js';
import type { LaneRef } from '../core/webhook-queue.js';
import { DEFAULT_TIMEOUT_MS } from './post-attempt.js';
import type { Outcome } from './recorder.js';

export const LEASE_SCOPE = 'webhooks';
export const LEASE_TTL_MS = 15_000;
export const ROUND_MS = 1_000;
/** An attempt starts only while the lease has at least this long left (its timeout, and a second). */
const START_MARGIN_MS = DEFAULT_TIMEOUT_MS + 1_000;
const MIRROR_PAGE = 1_000;
/** An outcome of a delivery this node has not queued yet waits this long for it before it is passed over. */
const UNMATCHED_WAIT_MS = 30_000;
const MIRROR_CHECKPOINT = 'shared-outcomes';

export interface SharedDeliveryHooks {
  /** Brings this node's queue up to the log's end. */
  catchUp(): Promise<void>;
  /** These lanes' pending rows changed in the database: memory reads them again, and their customers are looked at. */
  reread(lanes: readonly LaneRef[]): void;
}

export class SharedDelivery {
  /** Customers held, and until when (performance.now() ms) attempts may start. */
  private readonly held = new Map<string, number>();
  /** Customers leased and being made ready (catch-up, outcomes applied): not sent yet. */
  private readonly joining = new Set<string>();
  private readonly publishing: SharedOutcome[] = [];
  private publishInFlight: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private stopped = false;
  private failuresLoggedAt = -Infinity;
  private readonly q;

  constructor(
    private readonly coordination: Coordination,
    private readonly db: Database.Database,
    private readonly hooks: SharedDeliveryHooks,
    private readonly log: Logger,
    readonly node: string,
  ) {
    this.q = {
      candidates: db.prepare('SELECT DISTINCT customer_id FROM wh_endpoints WHERE enabled = 1 AND deleted = 0').pluck(),
      pendingOf: db.prepare('SELECT delivery_id FROM wh_deliveries WHERE customer_id = ? AND next_attempt_at IS NOT NULL').pluck(),
      apply: db.prepare(
        `UPDATE wh_deliveries SET attempts = @attempts, state = @state, next_attempt_at = @next_attempt_at, last_attempt_at = @last_attempt_at,
           last_status = @last_status, last_error = @last_error, last_latency_ms = @last_latency_ms, last_response_start = @last_response_start
         WHERE delivery_id = @delivery_id
           AND (attempts < @attempts OR (attempts = @attempts AND next_attempt_at IS NOT NULL AND @state <> 'pending'))
         RETURNING customer_id, webhook_id, device_id`,
      ),
      lanesOf: db.prepare('SELECT DISTINCT customer_id, webhook_id, device_id FROM wh_deliveries WHERE customer_id = ? AND next_attempt_at IS NOT NULL'),
      exists: db.prepare('SELECT 1 FROM wh_deliveries WHERE delivery_id = ?').pluck(),
      cursor: db.prepare('SELECT position FROM checkpoints WHERE name = ?').pluck(),
      saveCursor: db.prepare('INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position'),
    };
  }

  /** Whether this node may start an attempt for the customer now. */
  mayDeliver(customerId: string): boolean {
    const until = this.held.get(customerId);
    return until !== undefined && until - performance.now() >= START_MARGIN_MS;
  }

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.round = this.runRound().finally(() => {
        this.round = null;
        if (!this.stopped) this.timer = setTimeout(loop, ROUND_MS);
      });
    };
    loop();
  }

  /** Outcomes the recorder committed: published for the other nodes. */
  committed(batch: readonly Outcome[]): void {
    for (const o of batch) {
      if (!o.settled) continue;
      const { row, result } = o;
      this.publishing.push({
        delivery_id: row.delivery_id,
        customer_id: row.customer_id,
        webhook_id: row.webhook_id,
        attempts: o.attempt,
        state: o.settled.state,
        next_attempt_at: o.settled.nextAttemptAt,
        last_attempt_at: o.at,
        last_status: result.status,
        last_error: result.error,
        last_latency_ms: Math.round(result.latencyMs),
        last_response_start: result.responseBodyStart.slice(0, 1024),
      });
    }
    void this.publish();
  }

  /** No attempt starts from now on (the dispatcher then drains what is in flight). */
  pause(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.held.clear();
  }

  /** After the dispatcher has drained: publishes what is left, and lets the others take over at once. */
  async stop(): Promise<void> {
    this.pause();
    await this.round;
    await this.publish();
    await this.coordination.releaseAll(LEASE_SCOPE, this.node).catch(() => undefined);
  }

  private publish(): Promise<void> {
    this.publishInFlight ??= (async () => {
      while (this.publishing.length > 0) {
        const batch = this.publishing.splice(0, 500);
        try {
          await this.coordination.putOutcomes(batch);
        } catch (err) {
          // Kept for the next round; the lease lapses meanwhile if the database stays away.
          this.publishing.unshift(...batch);
          this.logFailure(err, 'could not publish webhook outcomes');
          return;
        }
      }
    })().finally(() => (this.publishInFlight = null));
    return this.publishInFlight;
  }

  private async runRound(): Promise<void> {
    try {
      await this.publish();
      const startedAt = performance.now();
      const candidates = this.q.candidates.all() as string[];
      const keep = [...this.held.keys(), ...this.joining];
      const { held, liveNodes } = await this.coordination.leaseRound(LEASE_SCOPE, this.node, keep, candidates, LEASE_TTL_MS);
      const share = Math.ceil(candidates.length / liveNodes);
      // Over its share (a node joined): the extras are not renewed next round, and lapse for the others to take.
      const kept = held.slice(0, Math.max(share, 0));
      const until = startedAt + LEASE_TTL_MS;
      for (const c of [...this.held.keys()]) if (!kept.includes(c)) this.held.delete(c);
      const fresh = kept.filter((c) => !this.held.has(c) && !this.joining.has(c));
      for (const c of kept) if (this.held.has(c)) this.held.set(c, until);
      if (fresh.length > 0) await this.join(fresh, until);
      await this.mirror();
    } catch (err) {
      this.logFailure(err, 'webhook lease round failed; sending only while leases last');
    }
  }

  /** Customers just leased: the queue catches up with the log, the last holder's outcomes are applied, then sending starts. */
  private async join(customers: string[], until: number): Promise<void> {
    for (const c of customers) this.joining.add(c);
    try {
      await this.hooks.catchUp();
      const changed: LaneRef[] = [];
      for (const c of customers) {
        const pending = this.q.pendingOf.all(c) as string[];
        for (let i = 0; i < pending.length; i += MIRROR_PAGE) {
          const rows = await this.coordination.outcomesOf(pending.slice(i, i + MIRROR_PAGE));
          changed.push(...this.apply(rows));
        }
      }
      for (const c of customers) this.held.set(c, until);
      this.log.info({ node: this.node, customers: customers.length }, 'webhook delivery took customers over');
      this.hooks.reread([...changed, ...customers.flatMap((c) => this.lanesOf(c))]);
    } finally {
      for (const c of customers) this.joining.delete(c);
    }
  }

  /** Applies the other nodes' outcomes since the last round, so this node's queue and deliveries list agree with theirs. */
  private async mirror(): Promise<void> {
    let cursor = BigInt((this.q.cursor.get(MIRROR_CHECKPOINT) as string | undefined) ?? '0');
    for (;;) {
      const page = await this.coordination.outcomesAfter(cursor, MIRROR_PAGE);
      const changed: LaneRef[] = [];
      let waiting = false;
      for (const row of page) {
        // Not queued here yet (this node's projector is behind): read again next round, for a while.
        if (!this.q.exists.get(row.delivery_id) && Date.now() - row.written_at < UNMATCHED_WAIT_MS) {
          waiting = true;
          break;
        }
        changed.push(...this.apply([row]));
        cursor = row.seq;
      }
      this.q.saveCursor.run(MIRROR_CHECKPOINT, cursor.toString());
      const mine = changed.filter((l) => this.held.has(l.customer_id));
      if (mine.length > 0) this.hooks.reread(mine);
      if (waiting || page.length < MIRROR_PAGE) return;
    }
  }

  /** Applies outcomes that are newer than this node's rows; returns the lanes they changed. */
  private apply(rows: readonly SharedOutcome[]): LaneRef[] {
    const changed: LaneRef[] = [];
    this.db.transaction(() => {
      for (const r of rows) {
        const lane = this.q.apply.get({
          delivery_id: r.delivery_id, attempts: r.attempts, state: r.state, next_attempt_at: r.next_attempt_at,
          last_attempt_at: r.last_attempt_at, last_status: r.last_status, last_error: r.last_error,
          last_latency_ms: r.last_latency_ms, last_response_start: r.last_response_start,
        }) as LaneRef | undefined;
        if (lane) changed.push(lane);
      }
    })();
    return changed;
  }

  private lanesOf(customerId: string): LaneRef[] {
    return this.q.lanesOf.all(customerId) as LaneRef[];
  }

  private logFailure(err: unknown, message: string): void {
    const now = Date.now();
    if (now - this.failuresLoggedAt < 10_000) return;
    this.failuresLoggedAt = now;
    this.log.warn({ err, node: this.node }, message);
  }
}
