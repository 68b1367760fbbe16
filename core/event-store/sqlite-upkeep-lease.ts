/**
 * Which upkeep thread looks after a log. Every store that appends starts a writer, and every
 * writer an upkeep thread (sqlite-log-upkeep.ts); with all roles in one process the gateway's
 * store and the projections' each have one, and processes scaled out on one data dir have one
 * each. One is enough: checkpoints and index steps act on the files, not on a store. Done twice,
 * a checkpoint pass finds the other's work done and an index step gives up on a busy index, but
 * each still costs its thread (docs/performance.md).
 *
 * So the threads share a lease, a row in the stream index's file (`upkeep_lease`, made with
 * the index's tables in sqlite-schema.ts: derived data, safe to lose with the index). Its
 * holder renews it every LEASE_RENEW_MS and does the upkeep. The others look once per
 * LEASE_RENEW_MS, and take it over at their next look once its holder released it (its store
 * closed) or once it has gone LEASE_MS without renewal (a process killed).
 */
import type Database from 'better-sqlite3';

/** How long a lease lasts unrenewed. */
export const LEASE_MS = 5_000;
/** How often its holder renews it, and how often the others look at it. */
export const LEASE_RENEW_MS = 1_000;

export class UpkeepLease {
  /** Until when this holder has the lease, as far as it knows (-Infinity: it has not). */
  private heldUntil = -Infinity;
  private nextLook = -Infinity;
  private readonly current: Database.Statement;
  private readonly claim: Database.Statement;
  private readonly giveUp: Database.Statement;

  constructor(
    db: Database.Database,
    private readonly holder: string,
  ) {
    this.current = db.prepare('SELECT holder, renewed_at AS renewedAt FROM idx.upkeep_lease WHERE id = 1');
    // Taken, or renewed, in one statement: two threads that both find the lease free cannot both get it.
    this.claim = db.prepare(
      `INSERT INTO idx.upkeep_lease (id, holder, renewed_at) VALUES (1, @holder, @now)
       ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, renewed_at = excluded.renewed_at
       WHERE upkeep_lease.holder = excluded.holder OR upkeep_lease.renewed_at <= @expired`,
    );
    this.giveUp = db.prepare('UPDATE idx.upkeep_lease SET renewed_at = 0 WHERE holder = ?');
  }

  /** Whether this holder is to do the upkeep now; looks at the lease (and renews or takes it) once per LEASE_RENEW_MS. */
  holds(now: number): boolean {
    if (now < this.nextLook) return now < this.heldUntil;
    this.nextLook = now + LEASE_RENEW_MS;
    try {
      // Only a lease that is ours or free is written: looking costs the others no write lock.
      const lease = this.current.get() as { holder: string; renewedAt: number } | undefined;
      const free = lease === undefined || lease.renewedAt <= now - LEASE_MS;
      if (lease?.holder !== this.holder && !free) this.heldUntil = -Infinity;
      else if (this.claim.run({ holder: this.holder, now, expired: now - LEASE_MS }).changes === 1) this.heldUntil = now + LEASE_MS;
      else this.heldUntil = -Infinity;
    } catch (err) {
      // Busy (an index step of another process): what this holder knew stands until the next look.
      // Anything else fails open, as before there was a lease: the upkeep that follows meets the
      // same failure, and the upkeep thread tells it.
      if (!(err as { code?: string }).code?.startsWith('SQLITE_BUSY')) this.heldUntil = now + LEASE_RENEW_MS;
    }
    return now < this.heldUntil;
  }

  /** Lets another thread take the lease at its next look (this one stops). */
  release(): void {
    if (this.heldUntil === -Infinity) return;
    this.heldUntil = -Infinity;
    try {
      this.giveUp.run(this.holder);
    } catch {
      // Busy: the lease then runs out on its own.
    }
  }
}
