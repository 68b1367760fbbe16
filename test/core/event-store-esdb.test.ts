/**
 * The EventStoreDB adapter against an in-process stand-in for its client (test/support/fake-esdb.ts),
 * which holds the server's semantics the adapter has to make up for; and, when FLEET_ESDB_URL
 * names a server, the same contract against it (README: "Running on EventStoreDB").
 */
import { randomUUID } from 'node:crypto';
import { EventStoreDBClient, jsonEvent } from '@eventstore/db-client';
import { describe, expect, it } from 'vitest';
import { EsdbEventStore } from '../../core/event-store/esdb.js';
import { InvalidPositionError, type EventToAppend } from '../../core/event-store/port.js';
import { FakeEsdbClient, type FakeEsdbOptions } from '../support/fake-esdb.js';
import { eventStoreContract } from './event-store.contract.js';

const created = (name: string): EventToAppend => ({
  id: randomUUID(),
  type: 'CustomerCreated',
  data: { customer_id: `cus_${name}`, name, plan: 'free', created_at: 1_700_000_000_000 },
});

function open(options: FakeEsdbOptions & { dedupeWindow?: number } = {}) {
  const client = new FakeEsdbClient(options);
  return { client, store: new EsdbEventStore(null, { client, ...(options.dedupeWindow ? { dedupeWindow: options.dedupeWindow } : {}) }) };
}

/** Resolves 'closed' when `close()` returns, 'still open' if it has not within a second. */
async function closes(store: EsdbEventStore): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([store.close().then(() => 'closed'), new Promise<string>((resolve) => (timer = setTimeout(resolve, 1_000, 'still open')))]);
  clearTimeout(timer);
  return outcome;
}

let current: FakeEsdbClient | null = null;
eventStoreContract(
  'eventstoredb (in-process stand-in)',
  async () => {
    // A system event after every other append, so every read of $all meets some.
    current = new FakeEsdbClient({ systemEventEvery: 2 });
    return new EsdbEventStore(null, { client: current });
  },
  { streamWideIds: true, systemEvents: async (count) => current!.writeSystemEvents(count) },
);

const url = process.env.FLEET_ESDB_URL;
if (url) {
  // System events written as a server's own would be: $-prefixed types, through the raw client.
  const systemEvents = async (count: number) => {
    const client = EventStoreDBClient.connectionString`${url}`;
    const events = Array.from({ length: count }, (_, i) => jsonEvent({ type: '$contract-system', data: { i } }));
    await client.appendToStream(`contract-system-${randomUUID().slice(0, 8)}`, events);
    await client.dispose();
  };
  eventStoreContract('eventstoredb', async () => new EsdbEventStore(url), { streamWideIds: true, systemEvents });
}

describe('eventstoredb adapter', () => {
  it('stores only the new events of a resend the server alone refuses', async () => {
    const { client, store } = open();
    const [a, b, c] = ['a', 'b', 'c'].map(created);
    await store.appendToStream('s', [a!, b!]);
    // The server, asked directly, refuses a partly overlapping resend with `any`.
    const data = (events: EventToAppend[]) => events.map((e) => jsonEvent({ id: e.id, type: e.type, data: e.data as never }));
    await expect(client.appendToStream('s', data([b!, c!]), { expectedRevision: 'any' })).rejects.toMatchObject({ type: 'wrong-expected-version' });
    const result = await store.appendToStream('s', [b!, c!]);
    expect(result.nextExpectedRevision).toBe(2n);
    expect((await store.readStream('s')).map((e) => e.id)).toEqual([a!.id, b!.id, c!.id]);
    expect(await closes(store)).toBe('closed');
  });

  it('does not write again a resend the server has forgotten the ids of', async () => {
    const { client, store } = open({ idempotencyCache: 4 });
    const a = created('a');
    const raw = [jsonEvent({ id: a.id, type: a.type, data: {} })];
    // The server alone writes it a second time once ten other ids came after it.
    await client.appendToStream('raw', raw, { expectedRevision: 'any' });
    for (let i = 0; i < 10; i++) await client.appendToStream(`other-${i}`, [jsonEvent({ type: 'Other', data: {} })], { expectedRevision: 'any' });
    await client.appendToStream('raw', raw, { expectedRevision: 'any' });
    expect(await store.readStream('raw')).toHaveLength(2);

    await store.appendToStream('s', [a]);
    for (let i = 0; i < 10; i++) await store.appendToStream(`other-${i}`, [created(`o${i}`)]);
    expect(await store.appendToStream('s', [a])).toMatchObject({ nextExpectedRevision: 0n });
    expect(await store.readStream('s')).toHaveLength(1);
    await store.close();
  });

  it('a resend older than the dedupe window is written again (the documented limit)', async () => {
    const { store } = open({ dedupeWindow: 2, idempotencyCache: 1 });
    const a = created('a');
    await store.appendToStream('s', [a, created('b'), created('c')]);
    await store.appendToStream('s', [a]);
    expect((await store.readStream('s')).filter((e) => e.id === a.id)).toHaveLength(2);
    await store.close();
  });

  it('appends racing for one stream each land once, at their own revisions', async () => {
    const { store } = open();
    const events = Array.from({ length: 8 }, (_, i) => created(`r${i}`));
    const results = await Promise.all(events.map((e) => store.appendToStream('race', [e])));
    expect(new Set(results.map((r) => r.nextExpectedRevision)).size).toBe(8);
    const again = await Promise.all([...events, ...events].map((e) => store.appendToStream('race', [e])));
    expect(again.every((r) => r.nextExpectedRevision === 7n)).toBe(true);
    expect((await store.readStream('race')).map((e) => e.revision)).toEqual([0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n]);
    await store.close();
  });

  it('checks an exact expected revision against the tail before dropping duplicates', async () => {
    const { store } = open();
    const [a, b] = ['a', 'b'].map(created);
    await store.appendToStream('s', [a!]);
    await expect(store.appendToStream('s', [a!, b!], { expectedRevision: 5n })).rejects.toMatchObject({ name: 'WrongExpectedRevisionError', actual: 0n });
    expect(await store.appendToStream('s', [a!, b!], { expectedRevision: 0n })).toMatchObject({ nextExpectedRevision: 1n });
    await store.close();
  });

  it('cancels a read it stops early, so close() returns', async () => {
    const { client, store } = open();
    await store.appendToStream('s', Array.from({ length: 50 }, (_, i) => created(`e${i}`)));
    client.writeSystemEvents(10);
    await store.appendToStream('s', [created('last')]);
    expect(await store.readAll({ maxCount: 5 })).toHaveLength(5);
    expect(client.calls.cancelled).toBeGreaterThan(0);
    expect(client.calls.open).toBe(0);
    expect(await closes(store)).toBe('closed');
    expect(client.calls.disposed).toBe(true);
  });

  it('closes the subscriptions left open, read or not', async () => {
    const { client, store } = open();
    await store.appendToStream('s', [created('a')]);
    const read = store.subscribeToAll();
    for await (const e of read) if (e) break;
    store.subscribeToAll();
    expect(await closes(store)).toBe('closed');
    expect(client.calls.open).toBe(0);
  });

  it('reads an event whose commit and prepare positions differ, and resumes after it', async () => {
    const { store } = open();
    await store.appendToStream('s', ['a', 'b', 'c'].map(created));
    const [a, b, c] = await store.readAll();
    expect(a!.position.commit).toBe(b!.position.commit);
    expect(a!.position.prepare).not.toBe(b!.position.prepare);
    expect((await store.readAll({ after: a!.position })).map((e) => e.id)).toEqual([b!.id, c!.id]);
    await store.close();
  });

  it('leaves the types a subscription does not keep to the server to filter out', async () => {
    const { client, store } = open();
    const other = (name: string): EventToAppend => ({ ...created(name), type: 'Other.Type' }) as unknown as EventToAppend;
    await store.appendToStream('s', [other('x'), created('a'), other('y')]);
    const sub = store.subscribeToAll({ onlyTypes: ['CustomerCreated'] });
    const seen: string[] = [];
    for await (const e of sub) {
      seen.push((e.data as { name: string }).name);
      if (seen.length === 2) break;
      await store.appendToStream('s', [other('z'), created('b')]);
    }
    expect(seen).toEqual(['a', 'b']);
    // The three events of the other type never reached the adapter: the server held them back.
    expect(client.calls.filteredOut).toBe(3);
    expect(await closes(store)).toBe('closed');
  });

  it('refuses a position of another store with InvalidPositionError', async () => {
    const { store } = open();
    await store.appendToStream('s', ['a', 'b'].map(created));
    // A SQLite checkpoint: commit and prepare alike, off this log's record boundaries.
    const foreign = { commit: 7n, prepare: 7n };
    await expect(store.readAll({ after: foreign })).rejects.toBeInstanceOf(InvalidPositionError);
    await expect(store.readAll({ after: { commit: 3n, prepare: 9n } })).rejects.toBeInstanceOf(InvalidPositionError);
    const next = async (after: { commit: bigint; prepare: bigint }) => {
      for await (const e of store.subscribeToAll({ after })) return e;
      return null;
    };
    await expect(next(foreign)).rejects.toBeInstanceOf(InvalidPositionError);
    await expect(next({ commit: -5n, prepare: -5n })).rejects.toBeInstanceOf(InvalidPositionError);
    expect(await closes(store)).toBe('closed');
  });
});

describe('eventstoredb adapter failures', () => {
  it('reports a server it cannot reach during an append as a StoreWriteError', async () => {
    const { client, store } = open();
    const unavailable = Object.assign(new Error('14 UNAVAILABLE: No connection established'), { type: 'unavailable' });
    client.readStream = () => {
      throw unavailable;
    };
    await expect(store.appendToStream('s', [created('a')])).rejects.toMatchObject({ name: 'StoreWriteError', code: 'ESDB_UNAVAILABLE' });
    await store.close();
  });
});
