/**
 * A projection keeps its tables in the read-model database in step with the log:
 * `migrate` creates them, `prepare` its statements and returns the handler the runner
 * calls for every event, in log order, inside the batch transaction that also moves the
 * checkpoint (runner.ts). Most handlers write their rows directly with SQL; devices and
 * latest-positions keep what a row becomes in a pure `evolve` beside the handler.
 * Detectors (safety-events, geofences) also return derived events, which the runner
 * appends to the log after the commit.
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

/** A handler returns the events it derives, if any; plain read models return nothing. */
export type EventHandler = (event: RecordedEvent) => DerivedEvent[] | void;

export interface Projection {
  name: string;
  /** Creates or upgrades its tables (idempotent). */
  migrate(db: Database.Database): void;
  /** Prepares statements once the tables exist; returns the per-event handler. */
  prepare(db: Database.Database): EventHandler;
}
