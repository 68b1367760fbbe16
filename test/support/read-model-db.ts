/** Projections over an in-memory read-model database, fed events by hand (no store, no runner). */
import Database from 'better-sqlite3';
import type { DomainEvent } from '../../core/events.js';
import type { RecordedEvent } from '../../core/event-store/port.js';
import { randomUuid } from '../../core/ids.js';
import type { DerivedEvent, EventHandler, Projection } from '../../projections/projection.js';

export interface ReadModelDb {
  db: Database.Database;
  /** Applies one event to every projection in order, as a batch of its own; returns what they derived. */
  apply(event: DomainEvent, id?: string): DerivedEvent[];
}

export function readModelDb(projections: Projection[]): ReadModelDb {
  const db = new Database(':memory:');
  for (const p of projections) p.migrate(db);
  const handlers: EventHandler[] = projections.map((p) => p.prepare(db));
  let seq = 0n;
  return {
    db,
    apply(event, id = randomUuid()) {
      seq++;
      const recorded = { ...event, id, stream: 'test', revision: seq, position: { commit: seq, prepare: seq }, metadata: {}, created: 0 } as RecordedEvent;
      const derived: DerivedEvent[] = [];
      for (const h of handlers) derived.push(...(h(recorded) ?? []));
      for (const h of handlers) h.flush?.();
      return derived;
    },
  };
}
