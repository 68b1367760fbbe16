import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { EsdbEventStore } from '../../core/event-store/esdb.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { INDEX_DRAIN_MIN_STEP, INDEX_DRAIN_TARGET_MS, INDEX_FLUSH_EVENTS, INDEX_FLUSH_STEP, LogWriter } from '../../core/event-store/sqlite-log-writer.js';
import { openLog } from '../../core/event-store/sqlite-schema.js';
import type { WireAppend } from '../../core/event-store/sqlite-wire.js';
import { until } from '../support/wait.js';
import { eventStoreContract } from './event-store.contract.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// One file for the whole suite: the contract uses unique stream names, as on a shared server.
eventStoreContract('sqlite', async () => new SqliteEventStore(join(dir, 'events.sqlite')));

const esdbUrl = process.env.FLEET_ESDB_URL;
// The EventStoreDB run happens when a server is configured (README: "Running on EventStoreDB").
if (esdbUrl) eventStoreContract('eventstoredb', async () => new EsdbEventStore(esdbUrl));

describe('sqlite group commit', () => {
  const created = (i: number) => ({
    id: crypto.randomUUID(),
    type: 'CustomerCreated' as const,
    data: { customer_id: `c${i}`, name: `n${i}`, plan: 'pro' as const, created_at: i },
  });

  it('keeps appends issued together durable across reopen, each at its own position', async () => {
    const path = join(dir, 'group.sqlite');
    const store = new SqliteEventStore(path);
    const results = await Promise.all(Array.from({ length: 500 }, (_, i) => store.appendToStream(`telemetry-dev${i}`, [created(i)])));
    expect(new Set(results.map((r) => r.position.commit)).size).toBe(500);
    await store.close();
    const reopened = new SqliteEventStore(path);
    const all = await reopened.readAll({ maxCount: 1000 });
    expect(all).toHaveLength(500);
    await reopened.close();
  });

  it('writes appends issued together in shared transactions: an event the database refuses rolls back the appends posted with it', async () => {
    const path = join(dir, 'group-rollback.sqlite');
    const store = new SqliteEventStore(path);
    await store.appendToStream('telemetry-before', [created(-1)]);
    // A second connection makes the database refuse one event type, as a failing disk or constraint would.
    const side = new Database(path);
    side.exec("CREATE TRIGGER refuse_poison BEFORE INSERT ON events WHEN NEW.type = 'Poison' BEGIN SELECT RAISE(ABORT, 'poison refused'); END");
    const batch = Array.from({ length: 100 }, (_, i) => ({ stream: `telemetry-dev${i}`, event: created(i) }));
    const poisoned = { ...batch[50]!.event, type: 'Poison' } as never;
    const outcomes = await Promise.allSettled(batch.map(({ stream, event }, i) => store.appendToStream(stream, [i === 50 ? poisoned : event])));
    // Appends issued in one turn are posted to the writer 32 at a time: the 50th went with the 32nd to the 63rd,
    // and those are written in one transaction at least (separate transactions would have kept the others).
    // The writer may have put other posts in the same transaction, depending on when they reached it.
    const rejected = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [i] : []));
    for (let i = 32; i < 64; i++) expect(rejected).toContain(i);
    expect(String((outcomes[50] as PromiseRejectedResult).reason)).toMatch(/poison refused/);
    // What was acknowledged is in the log; nothing of what was refused is.
    const fulfilled = batch.filter((_, i) => !rejected.includes(i)).map((b) => b.stream);
    expect(side.prepare('SELECT count(*) FROM events').pluck().get()).toBe(1 + fulfilled.length);
    expect((await store.readAll({ maxCount: 1000 })).map((e) => e.stream).sort()).toEqual(['telemetry-before', ...fulfilled].sort());
    side.exec('DROP TRIGGER refuse_poison');
    side.close();
    // The store goes on, and nothing of the rolled-back appends consumed a revision.
    const retried = await Promise.all(rejected.map((i) => store.appendToStream(batch[i]!.stream, [batch[i]!.event], { expectedRevision: 'no_stream' })));
    expect(retried.map((r) => r.nextExpectedRevision)).toEqual(rejected.map(() => 0n));
    expect(await store.readAll({ maxCount: 1000 })).toHaveLength(101);
    await store.close();
  });
});

/** Earlier layouts of the log: names inline, then ids with (stream, revision) unique in `events`. */
const EARLIER_LAYOUTS = {
  'stream names in every row': {
    schema: `CREATE TABLE events (
      position INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, stream TEXT NOT NULL, revision INTEGER NOT NULL,
      type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, created INTEGER NOT NULL, UNIQUE (stream, revision))`,
    insert: (db: Database.Database) => {
      const statement = db.prepare('INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
      return (position: number, id: string, stream: string, revision: number, data: string, created: number) =>
        statement.run(position, id, stream, revision, 'CustomerCreated', data, '{}', created);
    },
  },
  'stream ids, (stream, revision) unique in events': {
    schema: `CREATE TABLE streams (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
      CREATE TABLE events (
      position INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, stream_id INTEGER NOT NULL, revision INTEGER NOT NULL,
      type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, created INTEGER NOT NULL, UNIQUE (stream_id, revision))`,
    insert: (db: Database.Database) => {
      const stream = db.prepare('INSERT OR IGNORE INTO streams (name) VALUES (?)');
      const id = db.prepare('SELECT id FROM streams WHERE name = ?').pluck();
      const statement = db.prepare('INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
      return (position: number, eventId: string, name: string, revision: number, data: string, created: number) => {
        stream.run(name);
        statement.run(position, eventId, id.get(name), revision, 'CustomerCreated', data, '{}', created);
      };
    },
  },
};

describe.each(Object.entries(EARLIER_LAYOUTS))('sqlite log in an earlier layout (%s)', (name, layout) => {
  it('is migrated on open: every event keeps its position, stream, revision and data, and appends continue the revisions', async () => {
    const path = join(dir, `layout-${name.replace(/\W+/g, '-')}.sqlite`);
    const old = new Database(path);
    old.exec(layout.schema);
    const insert = layout.insert(old);
    const rows: Array<[number, string, string, number]> = [
      [1, 'a1', 'tenant-cus_1', 0],
      [2, 'b1', 'device-dev_1', 0],
      [3, 'a2', 'tenant-cus_1', 1],
    ];
    for (const [position, id, stream, revision] of rows) {
      insert(position, id, stream, revision, JSON.stringify({ customer_id: id }), position * 10);
    }
    old.close();

    const store = new SqliteEventStore(path);
    const all = await store.readAll();
    expect(all.map((e) => [Number(e.position.commit), e.id, e.stream, Number(e.revision), e.created])).toEqual(
      rows.map(([position, id, stream, revision]) => [position, id, stream, revision, position * 10]),
    );
    expect(all[2]!.data).toEqual({ customer_id: 'a2' });
    const next = await store.appendToStream(
      'tenant-cus_1',
      [{ id: 'a3', type: 'CustomerCreated', data: { customer_id: 'a3', name: 'n', plan: 'pro', created_at: 0 } }],
      { expectedRevision: 1n },
    );
    expect(next.nextExpectedRevision).toBe(2n);
    expect(next.position.commit).toBe(4n);
    expect((await store.readStream('tenant-cus_1')).map((e) => e.id)).toEqual(['a1', 'a2', 'a3']);
    await store.close();
  });
});

describe('sqlite log pages', () => {
  const customer = (id: string) => ({ id, type: 'CustomerCreated' as const, data: { customer_id: id, name: id, plan: 'pro' as const, created_at: 0 } });
  const pageSize = (path: string) => {
    const db = new Database(path, { readonly: true });
    try {
      return db.pragma('page_size', { simple: true });
    } finally {
      db.close();
    }
  };

  it('creates a new log with 16 KB pages', async () => {
    const path = join(dir, 'pages-new.sqlite');
    const store = new SqliteEventStore(path);
    await store.appendToStream('tenant-cus_1', [customer('p1')]);
    await store.close();
    expect(pageSize(path)).toBe(16_384);
  });

  it('keeps the pages of a log created with others, and goes on appending to it', async () => {
    const path = join(dir, 'pages-old.sqlite');
    const old = new Database(path);
    old.pragma('page_size = 4096');
    old.pragma('journal_mode = WAL');
    old.exec('CREATE TABLE earlier (x)');
    old.close();
    const store = new SqliteEventStore(path);
    await store.appendToStream('tenant-cus_1', [customer('o1'), customer('o2')]);
    await store.close();
    const reopened = new SqliteEventStore(path);
    expect((await reopened.readStream('tenant-cus_1')).map((e) => e.id)).toEqual(['o1', 'o2']);
    await reopened.close();
    expect(pageSize(path)).toBe(4096);
  });
});

describe('sqlite stream index', () => {
  const event = (id: string) => ({
    id,
    type: 'CustomerCreated' as const,
    data: { customer_id: id, name: id, plan: 'pro' as const, created_at: 0 },
  });

  /** Appends `n` events to each of two interleaved streams; returns their ids per stream. */
  async function interleave(store: SqliteEventStore, prefix: string, from: number, to: number): Promise<{ a: string[]; b: string[] }> {
    const ids = { a: [] as string[], b: [] as string[] };
    for (let i = from; i < to; i++) {
      for (const s of ['a', 'b'] as const) {
        const id = `${prefix}-${s}-${i}`;
        ids[s].push(id);
        await store.appendToStream(`${prefix}-${s}`, [event(id)]);
      }
    }
    return ids;
  }

  it('reads streams the same whether their events are indexed, in the tail, or split between both', async () => {
    const path = join(dir, 'index-tail.sqlite');
    const store = new SqliteEventStore(path);
    const first = await interleave(store, 'split', 0, 5);
    await store.close();
    // Reopening indexes the whole tail; five more events per stream stay in the new tail.
    const reopened = new SqliteEventStore(path, { indexFlushIntervalMs: 3_600_000 });
    const second = await interleave(reopened, 'split', 5, 10);
    const log = new Database(path, { readonly: true });
    expect(log.prepare("SELECT value FROM log_state WHERE name = 'indexed_through'").pluck().get()).toBe(10);
    expect(log.prepare('SELECT max(position) FROM events').pluck().get()).toBe(20);
    log.close();
    const ids = async (options: Parameters<SqliteEventStore['readStream']>[1]) =>
      (await reopened.readStream('split-a', options)).map((e) => e.id);
    const expected = [...first.a, ...second.a];
    expect(await ids({})).toEqual(expected);
    expect((await reopened.readStream('split-a')).map((e) => Number(e.revision))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await ids({ fromRevision: 3n, maxCount: 4 })).toEqual(expected.slice(3, 7));
    expect(await ids({ fromRevision: 7n })).toEqual(expected.slice(7));
    expect(await ids({ direction: 'backwards', maxCount: 3 })).toEqual(expected.slice(7).reverse());
    expect(await ids({ direction: 'backwards', fromRevision: 6n, maxCount: 4 })).toEqual(expected.slice(3, 7).reverse());
    expect(await ids({ direction: 'backwards', fromRevision: 2n })).toEqual(expected.slice(0, 3).reverse());
    expect(await reopened.readStream('split-none')).toEqual([]);
    const next = await reopened.appendToStream('split-a', [event('split-a-10')], { expectedRevision: 9n });
    expect(next.nextExpectedRevision).toBe(10n);
    await reopened.close();
  });

  it('folds the WAL back into the database file from a thread of its own, the writer never checkpointing', async () => {
    const path = join(dir, 'checkpointed.sqlite');
    const store = new SqliteEventStore(path);
    const fileBefore = statSync(path).size;
    const big = 'x'.repeat(2000);
    for (let i = 0; i < 20; i++) {
      await store.appendToStream(`cp-${i}`, Array.from({ length: 25 }, (_, k) => { const e = event(`cp-${i}-${k}`); return { ...e, data: { ...e.data, name: big } }; }));
    }
    // 500 events of 2 KB: about 1 MB in the WAL, which only a checkpoint copies into the file.
    await until(() => statSync(path).size > fileBefore + 900_000, 'the WAL checkpointed into the database file');
    expect((await store.readStream('cp-7')).map((e) => e.id)).toEqual(Array.from({ length: 25 }, (_, k) => `cp-7-${k}`));
    await store.close();
  });

  it('indexes a quiet tail on its own, and reads stay the same before, during and after', async () => {
    const path = join(dir, 'quiet-tail.sqlite');
    const store = new SqliteEventStore(path, { indexFlushIntervalMs: 20 });
    const ids = (stream: string, options: Parameters<SqliteEventStore['readStream']>[1] = {}) =>
      store.readStream(stream, options).then((events) => events.map((e) => e.id));
    const first = await interleave(store, 'quiet', 0, 3);
    // Read while the events may still be in the tail: the reader's tail map takes them in.
    expect(await ids('quiet-b')).toEqual(first.b);
    const log = new Database(path, { readonly: true });
    const indexedThrough = log.prepare("SELECT value FROM log_state WHERE name = 'indexed_through'").pluck();
    await until(() => indexedThrough.get() === 6, 'the quiet tail indexed');
    expect(log.prepare('SELECT count(*) FROM stream_index').pluck().get()).toBe(6);
    // The map still holds what was indexed meanwhile; each event must come once, from the index or the tail.
    expect(await ids('quiet-b')).toEqual(first.b);
    const second = await interleave(store, 'quiet', 3, 5);
    const b = [...first.b, ...second.b];
    expect(await ids('quiet-b')).toEqual(b);
    expect(await ids('quiet-b', { direction: 'backwards', maxCount: 3 })).toEqual(b.slice(2).reverse());
    expect(await ids('quiet-b', { fromRevision: 2n, maxCount: 2 })).toEqual(b.slice(2, 4));
    await until(() => indexedThrough.get() === 10, 'the second tail indexed');
    log.close();
    expect(await ids('quiet-a')).toEqual([...first.a, ...second.a]);
    await store.close();
  });

  it('a rolled-back transaction leaves no trace in what the writer knows of the tail', () => {
    const path = join(dir, 'rolled-back.sqlite');
    const wire = (stream: string, ids: string[], data: unknown = '{}'): WireAppend => ({
      stream, expected: 'any', created: 0, events: ids.map((id) => ({ id, type: 'CustomerCreated', data: data as string, metadata: '{}' })),
    });
    const before = new LogWriter(openLog(path));
    before.writeBatch([wire('kept', ['k0'])]);
    // A writer that has not seen `kept` yet: appending to it looks up its last event in the tail,
    // and the lookup sees the two rows of `fresh` that the same transaction added before it rolled back.
    const db = openLog(path);
    const writer = new LogWriter(db);
    expect(() => writer.writeBatch([wire('fresh', ['f0', 'f1']), wire('kept', ['k1']), wire('broken', ['b0'], { not: 'text' })])).toThrow(/parameter/);
    // The next transaction takes the stream id and a position the rolled-back one had used.
    writer.writeBatch([wire('other', ['o0'])]);
    const read = (stream: string) => writer.index.read(stream, { direction: 'forwards', fromRevision: 0, maxCount: 10 }).map((e) => e.event_id);
    expect(read('other')).toEqual(['o0']);
    expect(read('kept')).toEqual(['k0']);
    expect(read('fresh')).toEqual([]);
    expect(writer.writeBatch([wire('fresh', ['f2'])])).toEqual([{ ok: true, revision: 0, position: 3 }]);
    expect(read('fresh')).toEqual(['f2']);
    db.close();
  });

  it('moves a long tail into the index after commits, and drains the rest in steps sized by how long they take', () => {
    const path = join(dir, 'index-steps.sqlite');
    const db = openLog(path);
    // Each step "takes" what the test says: the clock moves that far between the step's two readings.
    const clock = { t: 0, stepMs: 0 };
    const writer = new LogWriter(db, () => (clock.t += clock.stepMs));
    const streams = 50;
    // 23,800 events: one step after commits leaves 19,800, room for the twelve drain steps below and 50 more.
    const perStream = (INDEX_FLUSH_EVENTS + 3_800) / streams;
    // Interleaved as a fleet writes them: one event per stream in turn.
    for (let i = 0; i < perStream; i++) {
      writer.writeBatch(Array.from({ length: streams }, (_, s) => ({
        stream: `fleet-${s}`, expected: 'any', created: 0,
        events: [{ id: `fleet-${s}-${i}`, type: 'CustomerCreated', data: '{}', metadata: '{}' }],
      })));
    }
    const total = streams * perStream;
    const indexedThrough = () => writer.index.indexedThrough();
    const drained = (steps: number) => Array.from({ length: steps }, () => {
      const before = indexedThrough();
      writer.drainIndexStep();
      return indexedThrough() - before;
    });
    // After commits: fixed steps, until the tail is under INDEX_FLUSH_EVENTS.
    const afterCommits: number[] = [];
    for (let n = writer.flushIndexIfDue(); n > 0; n = writer.flushIndexIfDue()) afterCommits.push(n);
    expect(afterCommits).toEqual([INDEX_FLUSH_STEP]);
    // Slow steps halve the next one, down to the minimum; fast ones double it, up to INDEX_FLUSH_STEP.
    clock.stepMs = 4 * INDEX_DRAIN_TARGET_MS;
    expect(drained(6)).toEqual([4000, 2000, 1000, 500, 250, 250]);
    expect(INDEX_DRAIN_MIN_STEP).toBe(250);
    clock.stepMs = INDEX_DRAIN_TARGET_MS / 4;
    expect(drained(6)).toEqual([250, 500, 1000, 2000, 4000, 4000]);
    // The last step comes out short: the drain stops there (false), with the whole tail indexed.
    while (writer.drainIndexStep());
    expect(indexedThrough()).toBe(total);
    expect(writer.drainIndexStep()).toBe(false);
    const read = (stream: string) => writer.index.read(stream, { direction: 'forwards', fromRevision: 0, maxCount: perStream + 1 }).map((e) => e.event_id);
    for (const s of [0, 17, streams - 1]) expect(read(`fleet-${s}`)).toEqual(Array.from({ length: perStream }, (_, i) => `fleet-${s}-${i}`));
    db.close();
  });

  it('commits index steps without an fsync of their own, and appends with one as before', () => {
    const path = join(dir, 'index-step-sync.sqlite');
    const db = openLog(path); // synchronous=FULL
    const writer = new LogWriter(db);
    // The connection's durability level whenever a row goes into the log or into the index.
    db.exec(`CREATE TEMP TABLE levels (kind TEXT, level INTEGER, PRIMARY KEY (kind, level));
      CREATE TEMP TRIGGER level_of_index_step AFTER INSERT ON main.stream_index
      BEGIN INSERT OR IGNORE INTO levels SELECT 'index', synchronous FROM pragma_synchronous; END;
      CREATE TEMP TRIGGER level_of_append AFTER INSERT ON main.events
      BEGIN INSERT OR IGNORE INTO levels SELECT 'append', synchronous FROM pragma_synchronous; END;`);
    const append = (i: number) => writer.writeBatch([{ stream: `sync-${i % 3}`, expected: 'any', created: 0, events: [{ id: `sync-${i}`, type: 'CustomerCreated', data: '{}', metadata: '{}' }] }]);
    for (let i = 0; i < 10; i++) append(i);
    expect(writer.drainIndexStep()).toBe(false); // the whole tail, in one short step
    append(10);
    expect(db.prepare('SELECT kind, level FROM temp.levels ORDER BY kind').raw().all()).toEqual([['append', 2], ['index', 1]]);
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    expect(writer.index.read('sync-1', { direction: 'forwards', fromRevision: 0, maxCount: 10 }).map((e) => e.event_id)).toEqual(['sync-1', 'sync-4', 'sync-7', 'sync-10']);
    db.close();
  });

  it('a second writer on the same file sees the first one\'s revisions (no stale cache, no lost event)', async () => {
    const path = join(dir, 'two-writers.sqlite');
    const one = new SqliteEventStore(path);
    const two = new SqliteEventStore(path);
    await one.appendToStream('shared', [event('s0')]);
    await two.appendToStream('shared', [event('s1')]);
    await one.appendToStream('shared', [event('s2')]);
    await expect(two.appendToStream('shared', [event('s3')], { expectedRevision: 1n })).rejects.toThrow();
    await two.appendToStream('shared', [event('s3')], { expectedRevision: 2n });
    expect((await one.readStream('shared')).map((e) => [e.id, Number(e.revision)])).toEqual([
      ['s0', 0],
      ['s1', 1],
      ['s2', 2],
      ['s3', 3],
    ]);
    await one.close();
    await two.close();
  });
});
