/**
 * A projection turns store events into read-model rows. The decision of what
 * a row becomes is a pure `evolve` in each projection's folder; `apply` only
 * reads the previous row, calls it and writes the result. The runner calls
 * `apply` inside the transaction that also moves the checkpoint.
 */
import type Database from 'better-sqlite3';
import type { RecordedEvent } from '../core/event-store/port.js';

export interface Projection {
  name: string;
  /** Creates or upgrades its tables (idempotent). */
  migrate(db: Database.Database): void;
  /** Prepares statements once the tables exist; returns the per-event handler. */
  prepare(db: Database.Database): (event: RecordedEvent) => void;
}
