/**
 * A projection turns store events into read-model rows. The decision of what
 * a row becomes is a pure `evolve` in each projection's folder; `apply` only
 * reads the previous row, calls it and writes the result. The runner calls
 * `apply` inside the transaction that also moves the checkpoint.
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
