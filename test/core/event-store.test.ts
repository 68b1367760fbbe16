import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { EsdbEventStore } from '../../core/event-store/esdb.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { INDEX_STEP } from '../../core/event-store/sqlite-log-upkeep.js';
import { LogWriter } from '../../core/event-store/sqlite-log-writer.js';
import { openLog, streamIndexPath } from '../../core/event-store/sqlite-schema.js';
import { StreamIndex } from '../../core/event-store/sqlite-stream-index.js';
import type { WireAppend } from '../../core/event-store/sqlite-wire.js';
import { until } from '../support/wait.js';
import { eventStoreContract } from './event-store.contract.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// One file for the whole suite: the contract uses unique stream names, as on a shared server.
eventStoreContract('sqlite', async () => new SqliteEventStore(join(dir, 'events.sqlite')), { logWideIds: true });

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

  it('starts its writer thread at the first append: a store that only reads (the history\'s, the webhooks\') has none', async () => {
    // Linux lists a process's threads in /proc/self/task; forks run one test file each, one test at a time.
    const threads = () => readdirSync('/proc/self/task').length;
    const path = join(dir, 'lazy-writer.sqlite');
    // The log's first event, written without a store (and so without a thread).
    const db = openLog(path);
    new LogWriter(db).writeBatch([
      { stream: 'telemetry-first', expected: 'any', created: 0, events: [{ id: 'first', type: 'CustomerCreated', data: JSON.stringify(created(0).data), metadata: '{}' }] },
    ]);
    db.close();
    // libuv starts its thread pool at its first use: started here, if no earlier test did, it is not counted as the store's.
    await access(dir);
    const before = threads();
    const reader = new SqliteEventStore(path);
    expect(await reader.readAll()).toHaveLength(1);
    expect(await reader.readStream('telemetry-first')).toHaveLength(1);
    expect(threads()).toBe(before);
    await reader.appendToStream('telemetry-second', [created(1)]);
    expect(threads()).toBeGreaterThan(before);
    expect(await reader.readAll()).toHaveLength(2);
    await reader.close();
    // A store closed without ever appending closes cleanly, and the log is whole.
    const idle = new SqliteEventStore(path);
    await idle.close();
    const again = new SqliteEventStore(path);
    expect(await again.readAll()).toHaveLength(2);
    await again.close();
  });

  it('refuses an append its batch cannot carry (a control character in a name) alone: those issued beside it commit', async () => {
    const store = new SqliteEventStore(join(dir, 'framing.sqlite'));
    const [before, refused, after] = await Promise.allSettled([
      store.appendToStream('telemetry-before', [created(1)]),
      store.appendToStream('telemetry-\u001ebad', [created(2)]),
      store.appendToStream('telemetry-after', [created(3)]),
    ]);
    expect(before.status).toBe('fulfilled');
    expect(refused).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/control character/) } });
    expect(after.status).toBe('fulfilled');
    expect((await store.readAll()).map((e) => e.stream)).toEqual(['telemetry-before', 'telemetry-after']);
    await store.close();
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

/** Earlier layouts of the log: names inline, then ids with (stream, revision) unique in `events`, then the stream index in the log's file. */
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
  'stream index inside the log file': {
    schema: `CREATE TABLE streams (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
      CREATE TABLE events (
      position INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, stream_id INTEGER NOT NULL, revision INTEGER NOT NULL,
      type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, created INTEGER NOT NULL);
      CREATE INDEX events_tail ON events (position, stream_id, revision);
      CREATE TABLE stream_index (stream_id INTEGER NOT NULL, revision INTEGER NOT NULL, position INTEGER NOT NULL, PRIMARY KEY (stream_id, revision)) WITHOUT ROWID;
      CREATE TABLE log_state (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
      INSERT INTO log_state VALUES ('indexed_through', 0);`,
    insert: (db: Database.Database) => {
      const stream = db.prepare('INSERT OR IGNORE INTO streams (name) VALUES (?)');
      const id = db.prepare('SELECT id FROM streams WHERE name = ?').pluck();
      const statement = db.prepare('INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
      // The first two events were indexed there (and must not be read twice, nor lost).
      const indexed = db.prepare('INSERT INTO stream_index VALUES (?, ?, ?)');
      const through = db.prepare("UPDATE log_state SET value = ? WHERE name = 'indexed_through'");
      return (position: number, eventId: string, name: string, revision: number, data: string, created: number) => {
        stream.run(name);
        statement.run(position, eventId, id.get(name), revision, 'CustomerCreated', data, '{}', created);
        if (position <= 2) {
          indexed.run(id.get(name), revision, position);
          through.run(position);
        }
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
    expect((await store.readStream('device-dev_1')).map((e) => e.id)).toEqual(['b1']);
    await store.close();
    // The stream index has a file of its own: nothing of one is left in the log's.
    const log = new Database(path, { readonly: true });
    expect(log.prepare("SELECT name FROM sqlite_master WHERE name IN ('stream_index', 'log_state')").all()).toEqual([]);
    log.close();
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

  /** `indexed_through` as the stream index's file has it. */
  function indexedThroughOf(path: string): (() => number) & { close(): void } {
    const index = new Database(streamIndexPath(path), { readonly: true });
    const statement = index.prepare('SELECT indexed_through FROM index_state').pluck();
    return Object.assign(() => statement.get() as number, { close: () => index.close() });
  }

  /** Moves the whole tail of a closed log into its index, as the upkeep thread does. */
  function indexWholeTail(path: string): void {
    const db = openLog(path);
    new StreamIndex(db).flush(Number.MAX_SAFE_INTEGER);
    db.close();
  }

  /** A closed log holding `perStream` interleaved events of two streams, all of them indexed. */
  async function indexedLog(prefix: string, perStream: number): Promise<{ path: string; written: { a: string[]; b: string[] } }> {
    const path = join(dir, `${prefix}.sqlite`);
    const store = new SqliteEventStore(path, { indexIntervalMs: 3_600_000 });
    const written = await interleave(store, prefix, 0, perStream);
    await store.close();
    indexWholeTail(path);
    return { path, written };
  }

  it('reads streams the same whether their events are indexed, in the tail, or split between both', async () => {
    const { path, written: first } = await indexedLog('split', 5);
    // Five more events per stream stay in the tail.
    const reopened = new SqliteEventStore(path, { indexIntervalMs: 3_600_000 });
    const second = await interleave(reopened, 'split', 5, 10);
    const indexedThrough = indexedThroughOf(path);
    expect(indexedThrough()).toBe(10);
    const log = new Database(path, { readonly: true });
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
    expect(indexedThrough()).toBe(10);
    indexedThrough.close();
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
    // The index's WAL too (500 entries: a few pages in the file once folded back).
    await until(() => statSync(streamIndexPath(path)).size > 4096, 'the index WAL checkpointed into its file');
    await store.close();
  });

  it('a store that appends has its tail indexed by the upkeep thread, and reads stay the same before, during and after', async () => {
    const path = join(dir, 'quiet-tail.sqlite');
    const store = new SqliteEventStore(path, { indexIntervalMs: 20 });
    const ids = (stream: string, options: Parameters<SqliteEventStore['readStream']>[1] = {}) =>
      store.readStream(stream, options).then((events) => events.map((e) => e.id));
    const first = await interleave(store, 'quiet', 0, 3);
    // Read while the events may still be in the tail: the reader's tail map takes them in.
    expect(await ids('quiet-b')).toEqual(first.b);
    const indexedThrough = indexedThroughOf(path);
    await until(() => indexedThrough() === 6, 'the tail indexed');
    const index = new Database(streamIndexPath(path), { readonly: true });
    expect(index.prepare('SELECT count(*) FROM stream_index').pluck().get()).toBe(6);
    index.close();
    // The map still holds what was indexed meanwhile; each event must come once, from the index or the tail.
    expect(await ids('quiet-b')).toEqual(first.b);
    const second = await interleave(store, 'quiet', 3, 5);
    const b = [...first.b, ...second.b];
    expect(await ids('quiet-b')).toEqual(b);
    expect(await ids('quiet-b', { direction: 'backwards', maxCount: 3 })).toEqual(b.slice(2).reverse());
    expect(await ids('quiet-b', { fromRevision: 2n, maxCount: 2 })).toEqual(b.slice(2, 4));
    await until(() => indexedThrough() === 10, 'the second tail indexed');
    indexedThrough.close();
    expect(await ids('quiet-a')).toEqual([...first.a, ...second.a]);
    await store.close();
  });

  it('one upkeep thread per log: a store whose upkeep finds the lease held elsewhere leaves the tail until it is released', async () => {
    const path = join(dir, 'leased.sqlite');
    // Another process's upkeep thread, renewing its lease: this one written to last a minute.
    const other = openLog(path);
    const hold = other.prepare("INSERT OR REPLACE INTO idx.upkeep_lease (id, holder, renewed_at) VALUES (1, 'another process', ?)");
    hold.run(Date.now() + 60_000);
    const store = new SqliteEventStore(path, { indexIntervalMs: 20 });
    const written = await interleave(store, 'leased', 0, 3);
    const indexedThrough = indexedThroughOf(path);
    // More than a second: this store's upkeep thread has looked at the lease (it looks once a second) and left it.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(indexedThrough()).toBe(0);
    expect(other.prepare('SELECT holder FROM idx.upkeep_lease').pluck().get()).toBe('another process');
    // Released, as a closing store's upkeep does: this store's takes it over and indexes the tail.
    hold.run(0);
    await until(() => indexedThrough() === 6, 'the tail indexed by the upkeep that took the lease over');
    expect(other.prepare('SELECT holder FROM idx.upkeep_lease').pluck().get()).not.toBe('another process');
    expect((await store.readStream('leased-a')).map((e) => e.id)).toEqual(written.a);
    indexedThrough.close();
    other.close();
    await store.close();
  });

  it('a store that closes releases its upkeep lease (another store of the log takes it at its next look)', async () => {
    const path = join(dir, 'released.sqlite');
    const store = new SqliteEventStore(path, { indexIntervalMs: 20 });
    await interleave(store, 'released', 0, 1);
    const index = new Database(streamIndexPath(path), { readonly: true });
    const lease = index.prepare('SELECT holder, renewed_at AS renewedAt FROM upkeep_lease');
    await until(() => lease.get() !== undefined, 'the lease taken by the only upkeep thread');
    const { holder } = lease.get() as { holder: string };
    await store.close();
    expect(lease.get()).toEqual({ holder, renewedAt: 0 });
    index.close();
  });

  it('the upkeep thread moves full steps of the tail at once, and a shorter rest only on its interval', async () => {
    const path = join(dir, 'full-steps.sqlite');
    const store = new SqliteEventStore(path, { indexIntervalMs: 3_600_000 });
    const appends = INDEX_STEP / 100 + 1;
    for (let i = 0; i < appends; i++) {
      await store.appendToStream(`full-${i % 7}`, Array.from({ length: 100 }, (_, k) => event(`full-${i}-${k}`)));
    }
    const indexedThrough = indexedThroughOf(path);
    await until(() => indexedThrough() === INDEX_STEP, 'one full step indexed');
    await store.appendToStream('full-0', [event('full-last')]);
    // 101 events stay in the tail: the interval (an hour here) has not come.
    expect(indexedThrough()).toBe(INDEX_STEP);
    indexedThrough.close();
    const read = await store.readStream('full-0');
    const ofFull0 = Array.from({ length: Math.ceil(appends / 7) }, (_, j) => 7 * j);
    expect(read.map((e) => e.id)).toEqual(ofFull0.flatMap((i) => Array.from({ length: 100 }, (_, k) => `full-${i}-${k}`)).concat('full-last'));
    await store.close();
  });

  it('appends never wait for an index step: with the index locked by a step, appends commit and read back', async () => {
    const path = join(dir, 'index-locked.sqlite');
    const store = new SqliteEventStore(path, { indexIntervalMs: 20 });
    const before = await interleave(store, 'locked', 0, 2);
    // Another connection's step, under way for as long as the test says: it holds the index's write lock.
    const step = openLog(path);
    step.exec('BEGIN');
    step.prepare('UPDATE idx.index_state SET indexed_through = indexed_through').run();
    // The log writer waits up to 5 s for a lock it needs: these would fail if appends took the index's.
    const during = await interleave(store, 'locked', 2, 6);
    expect((await store.readStream('locked-a')).map((e) => e.id)).toEqual([...before.a, ...during.a]);
    step.exec('COMMIT');
    step.close();
    // The upkeep thread's steps gave up while the lock was held; they go on once it is free.
    const indexedThrough = indexedThroughOf(path);
    await until(() => indexedThrough() === 12, 'the tail indexed once the index is free');
    indexedThrough.close();
    expect((await store.readStream('locked-b')).map((e) => e.id)).toEqual([...before.b, ...during.b]);
    await store.close();
  });

  it('an index that does not match its log (a log restored from a copy) is rebuilt when the log is opened', async () => {
    const path = join(dir, 'restored.sqlite');
    const copy = join(dir, 'restored-copy.sqlite');
    const store = new SqliteEventStore(path, { indexIntervalMs: 3_600_000 });
    const kept = await interleave(store, 'restored', 0, 3);
    await store.close();
    const log = new Database(path);
    log.exec(`VACUUM INTO '${copy}'`);
    log.close();
    const later = new SqliteEventStore(path, { indexIntervalMs: 3_600_000 });
    await interleave(later, 'restored', 3, 6);
    await later.close();
    indexWholeTail(path);
    // The log goes back to its copy (6 events); the index, which covered 12, stays.
    rmSync(path);
    rmSync(`${path}-wal`, { force: true });
    rmSync(`${path}-shm`, { force: true });
    const restoredLog = new Database(copy);
    restoredLog.exec(`VACUUM INTO '${path}'`);
    restoredLog.close();
    const restored = new SqliteEventStore(path, { indexIntervalMs: 3_600_000 });
    expect((await restored.readStream('restored-a')).map((e) => e.id)).toEqual(kept.a);
    // Appends go on from the restored log's revisions, and take positions the old index had entries for.
    await restored.appendToStream('restored-a', [event('restored-a-new')], { expectedRevision: 2n });
    await restored.appendToStream('restored-b', [event('restored-b-new')], { expectedRevision: 2n });
    const read = async (stream: string) => (await restored.readStream(stream)).map((e) => [e.id, Number(e.revision)]);
    expect(await read('restored-a')).toEqual([...kept.a, 'restored-a-new'].map((id, revision) => [id, revision]));
    expect(await read('restored-b')).toEqual([...kept.b, 'restored-b-new'].map((id, revision) => [id, revision]));
    await restored.close();
  });

  it('an index file that is not a database stops the open with an error that says how to rebuild it', async () => {
    const { path, written } = await indexedLog('garbled', 3);
    writeFileSync(streamIndexPath(path), 'not a database, but long enough to have a header '.repeat(100));
    rmSync(`${streamIndexPath(path)}-wal`, { force: true });
    expect(() => new SqliteEventStore(path)).toThrow(/stream index .*garbled\.sqlite-index cannot be read .*remove it .*rebuild it/);
    rmSync(streamIndexPath(path));
    rmSync(`${streamIndexPath(path)}-shm`, { force: true });
    const reopened = new SqliteEventStore(path, { indexIntervalMs: 3_600_000 });
    expect((await reopened.readStream('garbled-b')).map((e) => e.id)).toEqual(written.b);
    await reopened.close();
  });

  it('a long tail (a log without its index) is indexed at open, in one pass', async () => {
    const path = join(dir, 'long-tail.sqlite');
    const db = openLog(path, { synchronous: 'OFF' });
    const writer = new LogWriter(db);
    const streams = 500;
    const perStream = 220; // 110,000 events: more than a connection should start by reading into memory.
    for (let i = 0; i < perStream; i++) {
      writer.writeBatch(Array.from({ length: streams }, (_, s) => ({
        stream: `long-${s}`, expected: 'any', created: 0,
        events: [{ id: `long-${s}-${i}`, type: 'CustomerCreated', data: '{}', metadata: '{}' }],
      })));
    }
    db.close();
    rmSync(streamIndexPath(path));
    rmSync(`${streamIndexPath(path)}-wal`, { force: true });
    rmSync(`${streamIndexPath(path)}-shm`, { force: true });
    const store = new SqliteEventStore(path, { indexIntervalMs: 3_600_000 });
    const indexedThrough = indexedThroughOf(path);
    expect(indexedThrough()).toBe(streams * perStream);
    indexedThrough.close();
    const read = await store.readStream('long-317', { direction: 'backwards', maxCount: 3 });
    expect(read.map((e) => [e.id, Number(e.revision)])).toEqual([219, 218, 217].map((i) => [`long-317-${i}`, i]));
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
