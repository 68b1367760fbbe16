/**
 * Turns attempts' outcomes into rows: the attempt's log, the delivery's next retry
 * (retry-schedule.ts) or its end, and the endpoint's health, disabling it on a 410
 * or once every attempt has failed for days (endpoint-disable.ts). Outcomes are
 * committed in batches, and a delivery stays due in the database until its outcome
 * is committed, so a kill -9 sends again only what was in flight.
 */
import type Database from 'better-sqlite3';
import type { Clock } from '../core/clock.js';
import type { EventStore } from '../core/event-store/port.js';
import type { Logger } from '../core/logger.js';
import type { EndpointCache } from './endpoint-cache.js';
import { EndpointDisabler } from './endpoint-disable.js';
import type { DueRow } from './lanes.js';
import type { AttemptResult } from './post-attempt.js';
import { honoursRetryAfter, nextAttemptDelayMs, parseRetryAfter } from './retry-schedule.js';

/** An endpoint whose every attempt failed for this long is disabled (the retry schedule spans about 3 days). */
export const FAILING_DISABLE_MS = 3 * 24 * 3_600_000;
/** Delivered, failed and cancelled deliveries (and their attempts) are kept this long for GET .../deliveries. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3_600_000;
const FLUSH_MS = 25;
const PRUNE_EVERY_MS = 600_000;

export interface Outcome {
  row: DueRow;
  attempt: number;
  at: number;
  result: AttemptResult;
  /** What the commit made of the delivery: set by the recorder as it writes the outcome. */
  settled?: { state: 'pending' | 'delivered' | 'failed'; nextAttemptAt: number | null };
}

export interface RecorderOptions {
  store: EventStore;
  clock: Clock;
  log: Logger;
  random: () => number;
  /** After each committed batch, before the disablings it decided are appended to the log. */
  onCommitted(batch: readonly Outcome[]): void;
}

export class OutcomeRecorder {
  private readonly outcomes: Outcome[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  /** Endpoints whose `failing_since` is set (this recorder is the only one that sets it); a success clears it. */
  private readonly failingEndpoints: Set<string>;
  private readonly q;
  private readonly disabler: EndpointDisabler;
  private lastPrune = 0;

  constructor(
    private readonly db: Database.Database,
    endpoints: EndpointCache,
    private readonly o: RecorderOptions,
  ) {
    this.q = {
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
    this.disabler = new EndpointDisabler(db, endpoints, o);
  }

  /** At start: appends the disablings a crash or a failed append left out of the log. */
  announceLeftOver(): void {
    this.disabler.announceLeftOver();
  }

  /** The outcome joins the next batch; a 410 is committed now, disabling its endpoint before anything else of it starts. */
  record(outcome: Outcome): void {
    this.outcomes.push(outcome);
    if (outcome.result.status === 410) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Commits the outcomes recorded so far. */
  flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const batch = this.outcomes.splice(0);
    if (batch.length === 0) return;
    this.db.transaction(() => {
      for (const o of batch) this.write(o);
    }).immediate();
    this.o.onCommitted(batch);
    this.disabler.announce();
  }

  /** Keeps the delivery log bounded: settled deliveries older than the retention go with their attempts. */
  pruneIfDue(now: number): void {
    if (now - this.lastPrune <= PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    this.db.transaction(() => {
      for (const id of this.q.prune.all(now - DELIVERY_RETENTION_MS) as string[]) this.q.pruneAttempts.run(id);
    }).immediate();
  }

  private write(o: Outcome): void {
    const { row, result } = o;
    const responseStart = result.responseBodyStart.slice(0, 1024);
    if (!result.ok) this.q.insertAttempt.run(row.delivery_id, o.attempt, o.at, result.status, result.error, Math.round(result.latencyMs), responseStart);
    let state: 'pending' | 'delivered' | 'failed' = 'delivered';
    let next: number | null = null;
    if (result.ok) {
      if (this.failingEndpoints.delete(row.webhook_id)) this.q.healthy.run(row.webhook_id);
    } else if (result.status === 410) {
      state = 'failed';
      this.disabler.disable(row, 'gone', 'The receiver answered 410 Gone.', o.at);
    } else {
      const retryAfter = honoursRetryAfter(result.status) ? parseRetryAfter(result.retryAfter, o.at) : undefined;
      const delay = nextAttemptDelayMs(o.attempt, this.o.random, retryAfter);
      state = delay === null ? 'failed' : 'pending';
      next = delay === null ? null : o.at + delay;
      this.failingEndpoints.add(row.webhook_id);
      const health = this.q.failing.get(o.at, row.webhook_id) as { failing_since: number; enabled: number } | undefined;
      if (health && health.enabled && o.at - health.failing_since >= FAILING_DISABLE_MS) {
        this.disabler.disable(row, 'failing', `Every attempt failed since ${new Date(health.failing_since).toISOString()}.`, o.at);
      }
    }
    this.q.settle.run(o.attempt, state, next, o.at, result.status, result.error, Math.round(result.latencyMs), responseStart, row.seq);
    o.settled = { state, nextAttemptAt: next };
  }
}
