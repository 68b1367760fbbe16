/**
 * The runner of the read models and of webhook delivery's projector: live events are gathered
 * in memory and applied together, in a transaction of their own, once the subscription pauses
 * (or `liveDelayMs` after the first of them). Its listeners (`onApplied`) are told each batch's
 * events, and its projections may have the log read without some types (`skip`).
 */
import type Database from 'better-sqlite3';
import type { EventStore, RecordedEvent } from '../../core/event-store/port.js';
import type { Logger } from '../../core/logger.js';
import type { Projection } from '../projection.js';
import { RunnerCore } from './core.js';
import type { BatchOptions, SkipTypes } from './options.js';

export interface RunnerOptions extends BatchOptions {
  /**
   * Live events are committed together this long after the first of them (0, the default: a
   * turn of the event loop after the last of them); they wait in memory meanwhile. A waiter
   * (`waitFor`) does not wait for it.
   */
  liveDelayMs?: number;
  /**
   * Event types the projections ignore for now: the log is read without them (SkipTypes).
   * Webhook delivery skips fixes while no endpoint takes them, and so neither reads nor
   * parses most of the log.
   */
  skip?: SkipTypes;
}

export class ProjectionRunner extends RunnerCore {
  private readonly liveDelayMs: number;
  private buffer: RecordedEvent[] = [];
  private flushScheduled = false;
  /** An event arrived since the scheduled flush last looked: the subscription is still delivering. */
  private arrived = false;

  constructor(store: EventStore, db: Database.Database, projections: Projection[], log: Logger, options: RunnerOptions = {}) {
    super(store, db, projections, log, options, options.skip);
    this.liveDelayMs = options.liveDelayMs ?? 0;
  }

  /**
   * Calls `listener` after each committed batch with its events (live feeds
   * such as the API's event stream); the read models already include them.
   * Returns the unsubscribe function.
   */
  onApplied(listener: (events: readonly RecordedEvent[]) => void): () => void {
    this.appliedListeners.add(listener);
    return () => this.appliedListeners.delete(listener);
  }

  protected arrive(e: RecordedEvent): void {
    this.buffer.push(e);
    this.arrived = true;
    if (this.buffer.length >= this.maxBatch) this.flush();
    else if (this.liveDelayMs) {
      // Someone waits for an event: no delay for them (read-your-writes).
      if (this.waiters.length > 0) this.flush();
      else this.liveTimer ??= setTimeout(() => this.flushOrRetry(), this.liveDelayMs).unref();
    } else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flushWhenQuiet());
    }
  }

  /**
   * Applies the buffer once a turn of the event loop brought no new event: a subscription
   * working through a backlog (it reads a thousand events a turn) fills batches of up to
   * maxBatch events, while a quiet one is applied a turn after its last event.
   */
  private flushWhenQuiet(): void {
    if (this.arrived && this.buffer.length > 0) {
      this.arrived = false;
      setImmediate(() => this.flushWhenQuiet());
      return;
    }
    this.flushScheduled = false;
    this.flushOrRetry();
  }

  /** Applies the gathered events in a transaction of their own, after committing what was open (a catch-up's). */
  protected flush(): void {
    this.cancelLiveTimer();
    this.arrived = false;
    const batch = this.buffer;
    this.buffer = [];
    this.commitOpen();
    const skipChanged = this.applyRead(batch, batch.length);
    this.commitOpen();
    if (skipChanged) this.followAgain();
  }

  protected forgetGathered(): void {
    this.buffer = [];
  }
}
