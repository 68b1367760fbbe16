/**
 * Derived events (detectors) go to the `outbox` table in the transaction of the batch
 * that raised them and are appended to the store after its commit: a crash in between
 * leaves them for the next start, and their deterministic ids keep an append that did
 * happen from being duplicated.
 */
import type Database from 'better-sqlite3';
import type { EventStore } from '../../core/event-store/port.js';
import type { Logger } from '../../core/logger.js';
import type { DerivedEvent } from '../projection.js';

export class Outbox {
  /** Adds a derived event (stream, JSON) to the open batch's transaction. */
  readonly insert: Database.Statement;
  private readonly pending: Database.Statement;
  private readonly remove: Database.Statement;
  private flushing: Promise<void> | null = null;

  constructor(
    db: Database.Database,
    private readonly store: EventStore,
    private readonly log: Logger,
  ) {
    this.insert = db.prepare('INSERT INTO outbox (stream, event) VALUES (?, ?)');
    this.pending = db.prepare('SELECT seq, stream, event FROM outbox ORDER BY seq LIMIT 500');
    this.remove = db.prepare('DELETE FROM outbox WHERE seq <= ?');
  }

  /** The append in progress, if any (a stop waits for it). */
  get inFlight(): Promise<void> | null {
    return this.flushing;
  }

  /**
   * Appends outbox events to the store, removing each read of them once all are appended.
   * Each stream's events go in one append, in the order they were raised, and the appends
   * of one read go out together: the store commits them in one transaction, where appends
   * made one after another each waited for a commit (an fsync) of their own
   * (docs/performance.md). Across streams the log may order them otherwise than they were
   * raised; nothing reads derived events in an order across devices. A failure is logged
   * and left for the next batch's flush.
   */
  flush(): Promise<void> {
    this.flushing ??= (async () => {
      try {
        for (;;) {
          const rows = this.pending.all() as Array<{ seq: number; stream: string; event: string }>;
          if (rows.length === 0) return;
          const byStream = new Map<string, DerivedEvent['event'][]>();
          for (const row of rows) {
            let events = byStream.get(row.stream);
            if (!events) byStream.set(row.stream, (events = []));
            events.push(JSON.parse(row.event) as DerivedEvent['event']);
          }
          // Settled, not raced: a retry starts once none of this read's appends is still in flight.
          const outcomes = await Promise.allSettled([...byStream].map(([stream, events]) => this.store.appendToStream(stream, events)));
          const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
          if (failed) throw failed.reason;
          this.remove.run(rows[rows.length - 1]!.seq);
        }
      } catch (err) {
        this.log.error({ err }, 'outbox append failed; retrying on the next batch');
      }
    })().finally(() => {
      // Cleared here, not inside the body: with an empty outbox the body ends before `??=` assigns,
      // and a reset made there would be overwritten, leaving a settled promise that blocks every later flush.
      this.flushing = null;
    });
    return this.flushing;
  }
}
