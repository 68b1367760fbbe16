/**
 * A projection keeps its tables in the read-model database in step with the log:
 * `migrate` creates them, `prepare` its statements and returns the handler the runner
 * calls for every event, in log order, inside the batch transaction that also moves the
 * checkpoint (runner.ts). Most handlers write their rows directly with SQL; devices and
 * latest-positions keep what a row becomes in a pure `evolve` beside the handler.
 * Detectors (safety-events, geofences) also return derived events, which the runner
 * appends to the log after the commit.
 *
 * A projection whose rows change with nearly every fix (latest positions, a device's
 * last_seen_at, detector state) keeps them in memory for the batch and writes each once,
 * at the batch's end (`flush`, still inside its transaction, before the checkpoint):
 * a batch of thousands of fixes of a few hundred devices costs a few hundred writes.
 */
import type Database from 'better-sqlite3';
import type { DomainEvent } from '../core/events.js';
import type { EventToAppend, RecordedEvent } from '../core/event-store/port.js';

/**
 * An event a detector derives from the log (a harsh brake found in speed
 * changes, a geofence crossing). Its id must be deterministic (contentUuid of
 * what caused it) so that a replay appends nothing new.
 */
export interface DerivedEvent {
  stream: string;
  event: EventToAppend<DomainEvent>;
}

/**
 * A handler returns the events it derives, if any; plain read models return nothing.
 * One that keeps rows in memory during a batch (batch-rows.ts) also has `flush` and
 * `discard` (see `batchHandler`).
 */
export type EventHandler = ((event: RecordedEvent) => DerivedEvent[] | void) & Partial<BatchEnd>;

export interface BatchEnd {
  /** After the batch's last event, inside its transaction: writes what was kept and forgets it. */
  flush(): void;
  /** The batch's transaction rolled back: forgets what was kept, unwritten. */
  discard(): void;
}

/** A handler that keeps rows for the batch, with what ends the batch. */
export function batchHandler(handle: (event: RecordedEvent) => DerivedEvent[] | void, end: BatchEnd): EventHandler {
  return Object.assign(handle, end);
}

export interface Projection {
  name: string;
  /** Creates or upgrades its tables (idempotent). */
  migrate(db: Database.Database): void;
  /** Prepares statements once the tables exist; returns the per-event handler. */
  prepare(db: Database.Database): EventHandler;
}
