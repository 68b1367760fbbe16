/**
 * The position history's runner: live events are applied as they arrive, into a transaction
 * left open until the batch commits (`liveDelayMs` after its first event, at `maxBatch`
 * events, for a waiter, or at the stop), instead of waiting in memory for their batch: a parsed
 * event then dies young. The history's fixes, held for its 250 ms batches, outlived the young
 * generation (docs/performance.md). It keeps no events, so it has no `onApplied` listeners; and
 * it takes no `skip`: its live path does not stop a batch at an event that changes the types
 * skipped, as ProjectionRunner's does.
 */
import type Database from 'better-sqlite3';
import type { EventStore, RecordedEvent } from '../../core/event-store/port.js';
import type { Logger } from '../../core/logger.js';
import type { Projection } from '../projection.js';
import { RunnerCore } from './core.js';
import type { BatchOptions } from './options.js';

export interface ApplyOnArrivalOptions extends BatchOptions {
  /**
   * A live batch commits this long after its first event, if nothing committed it before. For
   * read models nobody follows live: under a steady trickle of fixes the runner commits a few
   * times a second instead of at every commit notice. `waitFor` does not wait for it.
   */
  liveDelayMs: number;
  /** Refused: see the module's comment. */
  skip?: never;
}

export class ApplyOnArrivalRunner extends RunnerCore {
  private readonly liveDelayMs: number;

  constructor(store: EventStore, db: Database.Database, projections: Projection[], log: Logger, options: ApplyOnArrivalOptions) {
    super(store, db, projections, log, options, undefined);
    this.liveDelayMs = options.liveDelayMs;
  }

  /** Applies a live event at once, in the open batch's transaction (begun by the batch's first event). */
  protected arrive(e: RecordedEvent): void {
    try {
      const opening = !this.open;
      this.applyInOpenBatch(e, this.lastBatchEvents);
      if (opening) this.liveTimer = setTimeout(() => this.flushOrRetry(), this.liveDelayMs).unref();
    } catch (err) {
      this.failed(err);
      return;
    }
    if (this.open!.events >= this.maxBatch || this.waiters.length > 0) this.flushOrRetry();
  }

  protected flush(): void {
    this.cancelLiveTimer();
    this.commitOpen();
  }

  /** Nothing is gathered outside the open batch, which a failure rolls back. */
  protected forgetGathered(): void {}
}
