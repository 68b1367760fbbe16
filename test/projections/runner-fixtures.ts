/**
 * What the runner's tests share: a projection that writes a row per event, stores whose
 * reads are slowed or held, and appends spread over a few devices' streams.
 */
import type Database from 'better-sqlite3';
import { expect } from 'vitest';
import { type EventStore, type RecordedEvent, positionToString } from '../../core/event-store/port.js';
import type { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { randomUuid } from '../../core/ids.js';
import type { Projection } from '../../projections/projection.js';
import type { ApplyOnArrivalRunner, ProjectionRunner } from '../../projections/runner.js';
import { until } from '../support/wait.js';

/** Makes a runner of one kind or the other over a store and database, for tests run with each. */
export type MakeRunner = (store: EventStore, db: Database.Database, projections: Projection[]) => ProjectionRunner | ApplyOnArrivalRunner;

/** Writes a row per event it is given: a second application of an event shows as a second row. */
export const applications: Projection = {
  name: 'applications',
  migrate: (db) => db.exec('CREATE TABLE IF NOT EXISTS applied (event_id TEXT NOT NULL)'),
  prepare(db) {
    const insert = db.prepare('INSERT INTO applied (event_id) VALUES (?)');
    return (e) => void insert.run(e.id);
  },
};

/** `applications`, failing (as a write that found the database busy would) the first time it meets an event `fails` picks. */
export function failingOnce(fails: (e: RecordedEvent) => boolean, message: string): { projection: Projection; thrown: () => number } {
  let thrown = 0;
  const projection: Projection = {
    name: 'failing-once',
    migrate: applications.migrate,
    prepare(db) {
      const insert = db.prepare('INSERT INTO applied (event_id) VALUES (?)');
      return (e) => {
        if (fails(e) && thrown++ === 0) throw new Error(message);
        insert.run(e.id);
      };
    },
  };
  return { projection, thrown: () => thrown };
}

/** The store, with reads that answer a few milliseconds later, counted. */
export function withSlowReads(store: SqliteEventStore, reads = { count: 0 }): EventStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop !== 'readAll') return Reflect.get(target, prop, receiver) as unknown;
      return async (...args: Parameters<EventStore['readAll']>) => {
        reads.count++;
        const events = await target.readAll(...args);
        await new Promise((r) => setTimeout(r, 5));
        return events;
      };
    },
  });
}

/**
 * The store, with reads held at a gate until `open()`: what arrives while a read
 * is held is known exactly, whatever the scheduler does. `after` records where
 * each read started ('start' for the beginning of the log).
 */
export function withGatedReads(store: SqliteEventStore) {
  const after: string[] = [];
  let opened = false;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const gated = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop !== 'readAll') return Reflect.get(target, prop, receiver) as unknown;
      return async (...args: Parameters<EventStore['readAll']>) => {
        after.push(args[0]?.after ? positionToString(args[0].after) : 'start');
        if (!opened) await gate;
        return target.readAll(...args);
      };
    },
  });
  return {
    store: gated as EventStore,
    after,
    /** Resolves once `count` reads have started. */
    held: (count: number) => until(() => after.length >= count, `${count} reads started`),
    open() {
      opened = true;
      release();
    },
  };
}

/** An event no projection here reads the data of. */
export const status = () => ({ id: randomUuid(), type: 'StatusReported' as const, data: {} as never });

/** Appends events one at a time, spread over three devices' streams, and keeps their ids in the order appended. */
export function appendsTo(store: SqliteEventStore) {
  const appended: string[] = [];
  const append = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const event = status();
      appended.push(event.id);
      await store.appendToStream(`telemetry-dev_${i % 3}`, [event]);
    }
  };
  return { appended, append };
}

/** Every appended event has exactly one row in `applied`, and nothing else has. */
export function expectAppliedOnceEach(db: Database.Database, appended: readonly string[]): void {
  const applied = db.prepare('SELECT event_id FROM applied').pluck().all() as string[];
  expect(applied.length).toBe(appended.length);
  expect(new Set(applied)).toEqual(new Set(appended));
}
