/**
 * The projection runner applies every event exactly once, also when several
 * catch-ups run at the same time (an API node catches up on every credential
 * it does not know yet, and requests arrive together) and the store answers
 * reads asynchronously, as EventStoreDB does. How live events are batched is
 * in runner-live.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type EventStore, positionToString } from '../../core/event-store/port.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { contentUuid, randomUuid } from '../../core/ids.js';
import { silentLogger } from '../../core/logger.js';
import { batchHandler, type Projection } from '../../projections/projection.js';
import { until } from '../support/wait.js';
import { ApplyOnArrivalRunner, ProjectionRunner, READ_MODEL_VERSION, logOrigin, openReadModelDb } from '../../projections/runner.js';
import { appendsTo, applications, expectAppliedOnceEach, failingOnce, status, withGatedReads, withSlowReads, type MakeRunner } from './runner-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-runner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('projection runner', () => {
  it('applies each event once when catch-ups overlap while events are being appended', async () => {
    const store = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'OFF' });
    const db = openReadModelDb(join(dir, 'readmodels.sqlite'));
    const runner = new ProjectionRunner(withSlowReads(store), db, [applications], silentLogger);
    const { appended, append } = appendsTo(store);
    await append(10);
    await Promise.all([runner.catchUp(), runner.catchUp(), append(5).then(() => Promise.all([runner.catchUp(), runner.catchUp()])), runner.catchUp()]);
    await runner.catchUp();
    expectAppliedOnceEach(db, appended);
    await runner.stop();
    await store.close();
    db.close();
  });

  it('serves a burst of catch-ups with one shared catch-up, every caller seeing what was appended before it asked', async () => {
    const store = new SqliteEventStore(join(dir, 'burst.sqlite'), { synchronous: 'OFF' });
    const db = openReadModelDb(join(dir, 'burst-readmodels.sqlite'));
    const reads = withGatedReads(store);
    const runner = new ProjectionRunner(reads.store, db, [applications], silentLogger);
    const applied = db.prepare('SELECT count(*) FROM applied').pluck();
    const append = () => store.appendToStream('tenant-cus_1', [{ id: randomUuid(), type: 'StatusReported', data: {} as never }]);
    const callers: Array<Promise<void>> = [];
    const ask = (seen: number) => callers.push(runner.catchUp().then(() => expect(applied.get()).toBeGreaterThanOrEqual(seen)));
    await append();
    ask(1);
    // The first catch-up is reading (held at the gate) while 49 more events and callers arrive.
    await reads.held(1);
    for (let seen = 2; seen <= 50; seen++) {
      await append();
      ask(seen);
    }
    expect(reads.after).toHaveLength(1);
    reads.open();
    await Promise.all(callers);
    expect(applied.get()).toBe(50);
    // The first catch-up reads the log to its end, and once more after committing (its outbox may have appended);
    // the 49 callers that came while it read share one more, which finds nothing new.
    const last = (await store.readAll({})).at(-1)!.position;
    expect(reads.after).toEqual(['start', positionToString(last), positionToString(last), positionToString(last)]);
    await runner.stop();
    await store.close();
    db.close();
  });

  const failingRunners: Array<[string, string, MakeRunner]> = [
    ['as events arrive', 'failing', (store, db, projections) => new ProjectionRunner(store, db, projections, silentLogger)],
    ['from a delayed batch', 'failing-delayed', (store, db, projections) => new ProjectionRunner(store, db, projections, silentLogger, { liveDelayMs: 20 })],
    ['while applied on arrival (the history)', 'failing-on-arrival', (store, db, projections) => new ApplyOnArrivalRunner(store, db, projections, silentLogger, { liveDelayMs: 20 })],
  ];
  for (const [how, name, makeRunner] of failingRunners) {
    it(`follows the log again from its checkpoint after a batch fails ${how}: no event lost, none applied twice`, async () => {
      const store = new SqliteEventStore(join(dir, `${name}.sqlite`), { synchronous: 'OFF' });
      const db = openReadModelDb(join(dir, `${name}-readmodels.sqlite`));
      const failing = failingOnce((e) => (e.data as { fail?: boolean }).fail === true, 'database is locked');
      const runner = makeRunner(store, db, [failing.projection]);
      await runner.start();
      const appended: string[] = [];
      const append = async (data: object) => {
        const id = randomUuid();
        appended.push(id);
        await store.appendToStream('telemetry-dev_1', [{ id, type: 'StatusReported', data: data as never }]);
      };
      const applied = () => db.prepare('SELECT event_id FROM applied ORDER BY rowid').pluck().all() as string[];
      for (let i = 0; i < 3; i++) await append({});
      await until(() => applied().length === 3, 'the first events applied');
      await append({ fail: true });
      for (let i = 0; i < 3; i++) await append({});
      await until(() => applied().length >= 7, 'every event applied after the failure');
      expect(failing.thrown()).toBe(2); // failed once, applied on the retry
      // And it keeps following the log afterwards.
      await append({});
      await until(() => applied().length >= 8, 'an event after the recovery applied');
      expect(applied()).toEqual(appended);
      await runner.stop();
      await store.close();
      db.close();
    });
  }

  it('starts once a database another connection keeps locked past its busy timeout is free again', async () => {
    const store = new SqliteEventStore(join(dir, 'locked-at-start.sqlite'), { synchronous: 'OFF' });
    const appended: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = randomUuid();
      appended.push(id);
      await store.appendToStream('telemetry-dev_1', [{ id, type: 'StatusReported', data: {} as never }]);
    }
    const path = join(dir, 'locked-at-start-readmodels.sqlite');
    const db = openReadModelDb(path);
    db.pragma('busy_timeout = 20');
    const runner = new ProjectionRunner(store, db, [applications], silentLogger);
    // An operator's session (or a backup) holding the write lock: the first catch-up finds the database busy.
    const holder = new Database(path);
    holder.exec('BEGIN IMMEDIATE');
    let released = false;
    const release = setTimeout(() => {
      holder.exec('COMMIT');
      released = true;
    }, 150);
    await runner.start();
    expect(released).toBe(true);
    expect(db.prepare('SELECT event_id FROM applied ORDER BY rowid').pluck().all()).toEqual(appended);
    clearTimeout(release);
    holder.close();
    await runner.stop();
    await store.close();
    db.close();
  });

  it('fails its start on an error that waiting does not cure', async () => {
    const store = new SqliteEventStore(join(dir, 'broken-at-start.sqlite'), { synchronous: 'OFF' });
    await store.appendToStream('telemetry-dev_1', [{ id: randomUuid(), type: 'StatusReported', data: {} as never }]);
    const db = openReadModelDb(join(dir, 'broken-at-start-readmodels.sqlite'));
    const broken: Projection = {
      name: 'broken',
      migrate: () => undefined,
      prepare: () => () => {
        throw new Error('no such table: gone');
      },
    };
    await expect(new ProjectionRunner(store, db, [broken], silentLogger).start()).rejects.toThrow('no such table: gone');
    await store.close();
    db.close();
  });

  it('commits batches of startBatch while it starts, then of maxBatch, telling beforeBatch the most each holds', async () => {
    const store = new SqliteEventStore(join(dir, 'batch-sizes.sqlite'), { synchronous: 'OFF' });
    const db = openReadModelDb(join(dir, 'batch-sizes-readmodels.sqlite'));
    await store.appendToStream('telemetry-dev_1', Array.from({ length: 7 }, status));
    const told: number[] = [];
    const committed: number[] = [];
    let inBatch = 0;
    // Counts the events of each batch: flush runs once per batch, inside its transaction.
    const batches: Projection = {
      name: 'batches',
      migrate: () => undefined,
      prepare: () =>
        batchHandler(() => void inBatch++, {
          flush() {
            committed.push(inBatch);
            inBatch = 0;
          },
          discard: () => void (inBatch = 0),
        }),
    };
    const runner = new ProjectionRunner(store, db, [applications, batches], silentLogger, { maxBatch: 2, startBatch: 5, beforeBatch: (n) => told.push(n) });
    await runner.start();
    expect(committed).toEqual([5, 2]);
    // A catch-up cannot know how many events are left: it tells the most its batch takes.
    expect(told).toEqual([5, 5]);
    // Whether the subscription or this catch-up applies the three, none comes in more than maxBatch.
    await store.appendToStream('telemetry-dev_1', Array.from({ length: 3 }, status));
    await runner.catchUp();
    expect(committed.slice(2).reduce((a, b) => a + b, 0)).toBe(3);
    expect(Math.max(...committed.slice(2))).toBeLessThanOrEqual(2);
    expect(Math.max(...told.slice(2))).toBeLessThanOrEqual(2);
    expect(db.prepare('SELECT count(*) FROM applied').pluck().get()).toBe(10);
    await runner.stop();
    await store.close();
    db.close();
  });

  it('reads a catch-up from the log a thousand events at a time, into batches of startBatch', async () => {
    const store = new SqliteEventStore(join(dir, 'chunks.sqlite'), { synchronous: 'OFF' });
    const db = openReadModelDb(join(dir, 'chunks-readmodels.sqlite'));
    for (let i = 0; i < 5; i++) await store.appendToStream(`telemetry-dev_${i}`, Array.from({ length: 500 }, status));
    const asked: number[] = [];
    const counted = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop !== 'readAll') return Reflect.get(target, prop, receiver) as unknown;
        return (...args: Parameters<EventStore['readAll']>) => {
          asked.push(args[0]?.maxCount ?? Number.POSITIVE_INFINITY);
          return target.readAll(...args);
        };
      },
    });
    const checkpoints: string[] = [];
    const runner = new ProjectionRunner(counted, db, [applications], silentLogger, { startBatch: 2_000 });
    runner.onApplied(() => checkpoints.push(positionToString(runner.position!)));
    await runner.start();
    expect(db.prepare('SELECT count(*) FROM applied').pluck().get()).toBe(2_500);
    // 1000 + 1000 fill the first batch; the rest, then the end (read twice: before and after the last commit).
    expect(asked).toEqual([1_000, 1_000, 1_000, 1_000, 1_000]);
    const all = await store.readAll({ maxCount: 3_000 });
    expect(checkpoints).toEqual([positionToString(all[1_999]!.position), positionToString(all[2_499]!.position)]);
    await runner.stop();
    await store.close();
    db.close();
  });

  it('rolls back the whole batch when a catch-up fails in a later read of it, and applies each event once on the next', async () => {
    const store = new SqliteEventStore(join(dir, 'chunk-fails.sqlite'), { synchronous: 'OFF' });
    const db = openReadModelDb(join(dir, 'chunk-fails-readmodels.sqlite'));
    const appended: string[] = [];
    for (let i = 0; i < 3; i++) {
      const events = Array.from({ length: 800 }, status);
      appended.push(...events.map((e) => e.id));
      await store.appendToStream(`telemetry-dev_${i}`, events);
    }
    // The 1,500th event is in the batch's second read of the log.
    const failing = failingOnce((e) => e.id === appended[1_499], 'disk I/O error');
    const runner = new ProjectionRunner(store, db, [failing.projection], silentLogger, { maxBatch: 2_000 });
    await expect(runner.catchUp()).rejects.toThrow('disk I/O error');
    // The first read's thousand events were in the same transaction: none of them stayed.
    expect(db.prepare('SELECT count(*) FROM applied').pluck().get()).toBe(0);
    expect(runner.position).toBeNull();
    await runner.catchUp();
    expectAppliedOnceEach(db, appended);
    expect(positionToString(runner.position!)).toBe(positionToString((await store.readAll({ maxCount: 3_000 })).at(-1)!.position));
    await runner.stop();
    await store.close();
    db.close();
  });

  it('rebuilds read models written by another version of the projections from the log, and keeps its own', async () => {
    const store = new SqliteEventStore(join(dir, 'versions.sqlite'), { synchronous: 'OFF' });
    const path = join(dir, 'versions-readmodels.sqlite');
    for (let i = 0; i < 3; i++) await store.appendToStream('tenant-cus_1', [{ id: randomUuid(), type: 'StatusReported', data: {} as never }]);
    const rowsAfterOpening = async () => {
      const db = openReadModelDb(path);
      const runner = new ProjectionRunner(store, db, [applications], silentLogger);
      await runner.catchUp();
      await runner.stop();
      const rows = db.prepare('SELECT count(*) FROM applied').pluck().get();
      const version = db.pragma('user_version', { simple: true });
      db.close();
      return { rows, version };
    };
    expect(await rowsAfterOpening()).toEqual({ rows: 3, version: READ_MODEL_VERSION });
    // Same version: the checkpoint holds, nothing is applied twice.
    expect(await rowsAfterOpening()).toEqual({ rows: 3, version: READ_MODEL_VERSION });
    // Rows of an older version (and a table it had that this one does not) are gone; the log is replayed once.
    const old = openReadModelDb(path);
    old.exec("CREATE TABLE retired (x); INSERT INTO applied (event_id) VALUES ('left over by version 1')");
    old.pragma('user_version = 1');
    old.close();
    expect(await rowsAfterOpening()).toEqual({ rows: 3, version: READ_MODEL_VERSION });
    const reopened = openReadModelDb(path);
    expect(reopened.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'retired'").pluck().get()).toBe(0);
    reopened.close();
    await store.close();
  });

  it('rebuilds read models built from another log (a store switched), whose checkpoint means nothing in this one', async () => {
    const path = join(dir, 'origin-readmodels.sqlite');
    const logA = new SqliteEventStore(join(dir, 'origin-a.sqlite'), { synchronous: 'OFF' });
    const logB = new SqliteEventStore(join(dir, 'origin-b.sqlite'), { synchronous: 'OFF' });
    for (let i = 0; i < 5; i++) await logA.appendToStream('tenant-cus_1', [{ id: randomUuid(), type: 'StatusReported', data: {} as never }]);
    for (let i = 0; i < 2; i++) await logB.appendToStream('tenant-cus_2', [{ id: randomUuid(), type: 'StatusReported', data: {} as never }]);
    const appliedIds = async (store: SqliteEventStore) => {
      const db = openReadModelDb(path, await logOrigin(store));
      const runner = new ProjectionRunner(store, db, [applications], silentLogger);
      await runner.catchUp();
      await runner.stop();
      const ids = db.prepare('SELECT event_id FROM applied ORDER BY rowid').pluck().all();
      db.close();
      return ids;
    };
    const idsOf = async (store: SqliteEventStore) => (await store.readAll({})).map((e) => e.id);
    expect(await appliedIds(logA)).toEqual(await idsOf(logA));
    // Log B is shorter: on A's checkpoint it would apply nothing, and A's rows would stay.
    expect(await appliedIds(logB)).toEqual(await idsOf(logB));
    expect(await appliedIds(logB)).toEqual(await idsOf(logB));
    await logA.close();
    await logB.close();
  });

  it('appends the derived events of a batch together, one append per stream in the order raised, and keeps them for a retry when one fails', async () => {
    const store = new SqliteEventStore(join(dir, 'outbox.sqlite'), { synchronous: 'OFF' });
    // Derives two events from each event of `source-1`, to the stream its data names, with ids derived from their cause.
    const deriving: Projection = {
      name: 'deriving',
      migrate: () => undefined,
      prepare: () => (e) => {
        if (e.stream !== 'source-1') return;
        const { to } = e.data as unknown as { to: string };
        return [1, 2].map((n) => ({ stream: to, event: { id: contentUuid('test-derived', e.id, String(n)), type: 'StatusReported', data: { from: e.id, n } as never } }));
      },
    };
    const sources = ['derived-a', 'derived-b', 'derived-a', 'derived-c'];
    for (const to of sources) await store.appendToStream('source-1', [{ id: randomUuid(), type: 'StatusReported', data: { to } as never }]);
    // Appends are held until released: how many are in flight at once is what the store could commit together.
    let failNext = true;
    const calls: Array<{ stream: string; n: number[] }> = [];
    let inFlight = 0;
    let maxInFlight = 0;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const gated = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop !== 'appendToStream') return Reflect.get(target, prop, receiver) as unknown;
        return async (...args: Parameters<EventStore['appendToStream']>) => {
          calls.push({ stream: args[0], n: args[1].map((e) => (e.data as unknown as { n: number }).n) });
          maxInFlight = Math.max(maxInFlight, ++inFlight);
          await released;
          inFlight--;
          if (args[0] === 'derived-b' && failNext) {
            failNext = false;
            throw new Error('the store refused this append');
          }
          return target.appendToStream(...args);
        };
      },
    });
    const db = openReadModelDb(join(dir, 'outbox-readmodels.sqlite'));
    const runner = new ProjectionRunner(gated, db, [deriving], silentLogger);
    const first = runner.catchUp();
    await until(() => calls.length === 3);
    // All three streams' appends were issued before any of them finished, each stream's events in one append.
    expect(maxInFlight).toBe(3);
    expect(calls).toEqual([
      { stream: 'derived-a', n: [1, 2, 1, 2] },
      { stream: 'derived-b', n: [1, 2] },
      { stream: 'derived-c', n: [1, 2] },
    ]);
    release();
    await first;
    // One append failed: the whole read stayed in the outbox, and the catch-up's next batch appended it again.
    expect(calls.slice(3).map((c) => c.stream)).toEqual(['derived-a', 'derived-b', 'derived-c']);
    expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
    // Ids are the same each time, so the events appended twice are in the log once.
    const derived = (await store.readAll()).filter((e) => e.stream.startsWith('derived-'));
    expect(derived.map((e) => [e.stream, (e.data as unknown as { n: number }).n])).toEqual([
      ['derived-a', 1], ['derived-a', 2], ['derived-a', 1], ['derived-a', 2],
      ['derived-c', 1], ['derived-c', 2],
      ['derived-b', 1], ['derived-b', 2],
    ]);
    await runner.stop();
    db.close();
    await store.close();
  });
});
