/**
 * The PostgreSQL store against a real server started for this file: the contract every adapter
 * passes, then what only a shared database can get wrong (commit order, group commit, lost
 * connections) and its selection by URL.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openEventStore } from '../../core/event-store/open.js';
import type { RecordedEvent } from '../../core/event-store/port.js';
import { APPEND_LOCK_KEY, INSERT_EVENTS_SQL, PostgresEventStore, openPostgresEventStore } from '../../core/event-store/postgres.js';
import { type PostgresServer, startPostgresServer } from '../support/postgres-server.js';
import { StoreWriteError } from '../../core/event-store/write-health.js';
import { until } from '../support/wait.js';
import { eventStoreContract } from './event-store.contract.js';

let server: PostgresServer;
let url = '';

beforeAll(async () => {
  server = await startPostgresServer();
  await server.createDatabase('fleet');
  url = server.url('fleet');
}, 120_000);
afterAll(async () => server?.stop(), 60_000);

// One database for the whole suite: the contract uses unique stream names, as on a shared server.
eventStoreContract('postgres', async () => openPostgresEventStore(url), { logWideIds: true });

const created = (name: string) => ({
  id: randomUUID(),
  type: 'CustomerCreated' as const,
  data: { customer_id: `cus_${name}`, name, plan: 'pro' as const, created_at: 0 },
});

/** A raw connection of the test's own, outside any store. */
async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

describe('postgres event store', () => {
  it('a follower sees every event once, in log order, when a writer commits late', async () => {
    const store = await openPostgresEventStore(url);
    const stream = `late-${randomUUID()}`;
    const start = await store.appendToStream(stream, [created('start')]);
    const seen: RecordedEvent[] = [];
    const sub = store.subscribeToAll({ after: start.position });
    const following = (async () => {
      for await (const e of sub) {
        if (e.stream !== stream) continue;
        seen.push(e);
        if (seen.length === 3) break;
      }
    })();

    // Writer one takes its position in a transaction held open, with the adapter's lock and SQL.
    const held = await connect();
    await held.query('BEGIN');
    await held.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK_KEY.toString()]);
    const ev = created('held');
    await held.query(INSERT_EVENTS_SQL, [[ev.id], [stream], ['1'], [ev.type], [JSON.stringify(ev.data)], ['{}'], ['0']]);
    // Writer two is the store, committing meanwhile; writer three another node's store.
    const other = await openPostgresEventStore(url);
    let secondDone = false;
    const second = store.appendToStream(stream, [created('second')]).finally(() => (secondDone = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(secondDone).toBe(false);
    expect(seen).toEqual([]);
    await held.query('COMMIT');
    await held.end();
    await second;
    await other.appendToStream(stream, [created('third')]);
    await following;
    await sub.close();

    expect(seen.map((e) => (e.data as { name: string }).name)).toEqual(['held', 'second', 'third']);
    const all = (await store.readAll({ after: start.position, maxCount: 10_000 })).filter((e) => e.stream === stream);
    expect(all.map((e) => e.id)).toEqual(seen.map((e) => e.id));
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.position.commit > seen[i - 1]!.position.commit).toBe(true);
    await other.close();
    await store.close();
  });

  it('commits the appends of one turn in one transaction, refusing only the one that fails its check', async () => {
    const store = await openPostgresEventStore(url);
    const before = store.transactionsCommitted;
    const taken = `taken-${randomUUID()}`;
    await store.appendToStream(taken, [created('first')]);
    const results = await Promise.allSettled([
      ...Array.from({ length: 50 }, (_, i) => store.appendToStream(`group-${randomUUID()}`, [created(`g${i}`)], { expectedRevision: 'no_stream' })),
      store.appendToStream(taken, [created('refused')], { expectedRevision: 'no_stream' }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(50);
    expect(results.at(-1)!.status).toBe('rejected');
    expect(store.transactionsCommitted - before).toBe(2);
    const positions = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.position.commit] : []));
    expect(new Set(positions).size).toBe(50);
    await store.close();
  });

  it('commits a group in one round trip to the server', async () => {
    const store = await openPostgresEventStore(url);
    await store.appendToStream(`warm-${randomUUID()}`, [created('warm')]);
    const query = vi.spyOn(pg.Client.prototype, 'query');
    try {
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.appendToStream(`trip-${randomUUID()}`, [created(`t${i}`)], { expectedRevision: 'no_stream' })));
      expect(query).toHaveBeenCalledTimes(1);
    } finally {
      query.mockRestore();
    }
    await store.close();
  });

  it('writes an id whose first append in the group was refused with the append that comes after', async () => {
    const store = await openPostgresEventStore(url);
    const taken = `taken-${randomUUID()}`;
    await store.appendToStream(taken, [created('first')]);
    const again = created('again');
    const other = `other-${randomUUID()}`;
    const [refused, written, dup] = await Promise.allSettled([
      store.appendToStream(taken, [again], { expectedRevision: 'no_stream' }),
      store.appendToStream(other, [again, created('next')], { expectedRevision: 'no_stream' }),
      store.appendToStream(taken, [again], { expectedRevision: 0n }),
    ]);
    expect(refused.status).toBe('rejected');
    expect(written.status === 'fulfilled' && written.value.nextExpectedRevision).toBe(1n);
    // Its id now stored in the log, the third append writes nothing and answers with its stream's head.
    expect(dup.status === 'fulfilled' && dup.value.nextExpectedRevision).toBe(0n);
    expect((await store.readStream(other)).map((e) => e.id)[0]).toBe(again.id);
    expect(await store.readStream(taken)).toHaveLength(1);
    await store.close();
  });

  it('answers appends to one stream in one turn with their own revisions and positions', async () => {
    const store = await openPostgresEventStore(url);
    const stream = `same-${randomUUID()}`;
    const a = created('a');
    const [one, two, dup] = await Promise.all([
      store.appendToStream(stream, [a], { expectedRevision: 'no_stream' }),
      store.appendToStream(stream, [created('b')], { expectedRevision: 0n }),
      store.appendToStream(stream, [a]),
    ]);
    expect([one.nextExpectedRevision, two.nextExpectedRevision, dup.nextExpectedRevision]).toEqual([0n, 1n, 1n]);
    expect(dup.position).toEqual(two.position);
    expect(two.position.commit > one.position.commit).toBe(true);
    expect((await store.readStream(stream, { direction: 'backwards', fromRevision: 0n })).map((e) => e.id)).toEqual([a.id]);
    await store.close();
  });

  it('wakes a follower on another node without waiting for its poll', async () => {
    const reader = await openPostgresEventStore(url);
    const writer = await openPostgresEventStore(url);
    const stream = `notify-${randomUUID()}`;
    const first = await writer.appendToStream(stream, [created('a')]);
    const sub = reader.subscribeToAll({ after: first.position });
    const it = sub[Symbol.asyncIterator]();
    const next = it.next();
    // Let the follower find nothing and wait, then write from the other store.
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    await writer.appendToStream(stream, [created('b')]);
    const got = await next;
    expect((got.value as RecordedEvent).stream).toBe(stream);
    expect(Date.now() - t0).toBeLessThan(400);
    await sub.close();
    await reader.close();
    await writer.close();
  });

  it('rejects an append whose connection is lost, and appends again on a new one', async () => {
    const store = await openPostgresEventStore(url);
    const admin = await connect();
    // Hold the append lock so the store's transaction is open when its connection is cut.
    await admin.query('BEGIN');
    await admin.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK_KEY.toString()]);
    const stream = `lost-${randomUUID()}`;
    const append = store.appendToStream(stream, [created('lost')]);
    const watch = await connect();
    await until(async () => (await watch.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'fleet' AND wait_event_type = 'Lock'`)).rowCount === 1);
    await watch.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'fleet' AND wait_event_type = 'Lock'`);
    // Write health (core/event-store/write-health.ts) reads it as the store failing to write.
    const failure = await append.catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(StoreWriteError);
    expect((failure as StoreWriteError).code).toMatch(/^PG_/);
    await admin.query('COMMIT');
    await admin.end();
    await watch.end();
    expect(await store.readStream(stream)).toEqual([]);
    const again = await store.appendToStream(stream, [created('again')]);
    expect(again.nextExpectedRevision).toBe(0n);
    await expect(store.probeWrite()).resolves.toBeUndefined();
    await store.close();
  });

  it('ends its subscriptions and refuses appends once closed', async () => {
    const store = await openPostgresEventStore(url);
    const sub = store.subscribeToAll({ after: (await store.appendToStream(`close-${randomUUID()}`, [created('a')])).position });
    const done = (async () => {
      for await (const _ of sub) void _;
    })();
    await store.close();
    await done;
    await expect(store.appendToStream('s', [created('b')])).rejects.toThrow(/closed/);
  });

  it('is opened from a postgres:// or postgresql:// FLEET_STORE', async () => {
    for (const scheme of ['postgres', 'postgresql'] as const) {
      const store = await openEventStore(server.url('fleet', scheme));
      expect(store).toBeInstanceOf(PostgresEventStore);
      const stream = `open-${randomUUID()}`;
      await store.appendToStream(stream, [created(scheme)]);
      expect(await store.readStream(stream)).toHaveLength(1);
      await store.close();
    }
  });

  it('creates its schema once when nodes open a new database together', async () => {
    await server.createDatabase('fresh');
    const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgresEventStore(server.url('fresh'))));
    await Promise.all(stores.map((s, i) => s.appendToStream(`s${i}`, [created(`n${i}`)])));
    expect(await stores[0]!.readAll()).toHaveLength(4);
    await Promise.all(stores.map((s) => s.close()));
  });
});
