/** The in-memory store passes the contract every adapter passes, and keeps what it stored apart from its callers. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { InMemoryEventStore } from '../../core/event-store/memory.js';
import { eventStoreContract } from './event-store.contract.js';

eventStoreContract('memory', async () => new InMemoryEventStore(), { logWideIds: true });

describe('in-memory event store', () => {
  const created = (id: string) => ({ id, type: 'CustomerCreated' as const, data: { customer_id: id, name: id, plan: 'pro' as const, created_at: 0 } });

  it('records the clock at the append, and hands readers copies', async () => {
    const clock = new ManualClock(1_000);
    const store = new InMemoryEventStore({ clock });
    const event = created('c1');
    await store.appendToStream('tenant-c1', [event]);
    event.data.name = 'changed by the appender';
    const [read] = await store.readStream('tenant-c1');
    expect(read).toMatchObject({ created: 1_000, position: { commit: 1n, prepare: 1n }, metadata: {}, data: { name: 'c1' } });
    (read!.data as { name: string }).name = 'changed by a reader';
    expect((await store.readAll())[0]!.data).toMatchObject({ name: 'c1' });
  });

  it('reads a stream from a revision in both directions', async () => {
    const store = new InMemoryEventStore();
    await store.appendToStream('s', ['a', 'b', 'c', 'd'].map(created));
    const ids = async (options: Parameters<InMemoryEventStore['readStream']>[1]) => (await store.readStream('s', options)).map((e) => e.id);
    expect(await ids({ fromRevision: 1n, maxCount: 2 })).toEqual(['b', 'c']);
    expect(await ids({ direction: 'backwards', fromRevision: 2n })).toEqual(['c', 'b', 'a']);
    expect(await ids({ direction: 'backwards', fromRevision: 9n, maxCount: 1 })).toEqual(['d']);
    expect(await ids({ fromRevision: 'end' })).toEqual([]);
    expect(await ids({ maxCount: 0 })).toEqual([]);
  });

  it('refuses data that is not JSON, writing nothing of the append', async () => {
    const store = new InMemoryEventStore();
    const bad = { id: 'x', type: 'CustomerCreated', data: undefined } as never;
    await expect(store.appendToStream('s', [created('ok'), bad])).rejects.toThrow(/no JSON data/);
    expect(await store.readAll()).toEqual([]);
  });

  it('ends its subscriptions and refuses appends once closed', async () => {
    const store = new InMemoryEventStore();
    const sub = store.subscribeToAll();
    const seen: string[] = [];
    const done = (async () => {
      for await (const e of sub) seen.push(e.id);
    })();
    await store.appendToStream('s', [created('a')]);
    await store.close();
    await done;
    expect(seen).toEqual(['a']);
    await expect(store.appendToStream('s', [created('b')])).rejects.toThrow(/closed/);
  });
});
