/** The command handler: one concurrency style (expected revisions), bounded retries; and the pure claim decisions. */
import { describe, expect, it } from 'vitest';
import { STALE_CLAIM_MS, decideClaim, decideRelease } from '../../../core/commands/claims.js';
import { type Aggregate, DEFAULT_ATTEMPTS, handle, load } from '../../../core/commands/handler.js';
import type { DomainEvent } from '../../../core/events.js';
import { InMemoryEventStore } from '../../../core/event-store/memory.js';
import { WrongExpectedRevisionError } from '../../../core/event-store/port.js';
import { T0 } from '../../support/given-when-then.js';

const named = (name: string): DomainEvent => ({ type: 'CustomerCreated', data: { customer_id: name, name, plan: 'pro', created_at: T0 } });
/** Counts a stream's events; 'first' sees only the first. */
const counting = (reads: 'whole' | 'first'): Aggregate<number> => ({ initial: 0, evolve: (n) => n + 1, reads });

describe('handle', () => {
  it('appends what decide returns at the revision the state was read at, giving events ids unless they carry one', async () => {
    const store = new InMemoryEventStore();
    await store.appendToStream('s', [{ ...named('a'), id: 'a' }]);
    const seen: number[] = [];
    const handled = await handle(store, { stream: 's', aggregate: counting('whole'), decide: (n) => (seen.push(n), [named('b'), { ...named('c'), id: 'c' }]) });
    expect(seen).toEqual([1]);
    expect(handled.events.map((e) => e.id)).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/), 'c']);
    expect(handled.position).toEqual({ commit: 3n, prepare: 3n });
    expect((await store.readStream('s')).map((e) => e.revision)).toEqual([0n, 1n, 2n]);
  });

  it('appends nothing when decide returns nothing', async () => {
    const store = new InMemoryEventStore();
    expect(await handle(store, { stream: 's', aggregate: counting('whole'), decide: () => [] })).toEqual({ position: null, events: [] });
    expect(await store.readAll()).toEqual([]);
  });

  it('decides again on the newer state when another append got in, and gives up after a bounded number of attempts', async () => {
    const store = new InMemoryEventStore();
    const seen: number[] = [];
    // Every decision lets another writer in first, until the last attempt.
    const racing = (n: number) => {
      seen.push(n);
      if (seen.length < DEFAULT_ATTEMPTS) void store.appendToStream('s', [{ ...named(`other ${n}`), id: `other ${n}` }]);
      return [named('mine')];
    };
    await handle(store, { stream: 's', aggregate: counting('whole'), decide: racing });
    expect(seen).toEqual([0, 1, 2, 3, 4].slice(0, DEFAULT_ATTEMPTS));
    let others = 0;
    const always = () => {
      void store.appendToStream('s', [{ ...named('other'), id: `always ${others++}` }]);
      return [named('never')];
    };
    await expect(handle(store, { stream: 's', aggregate: counting('whole'), decide: always })).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    await expect(handle(store, { stream: 's', aggregate: counting('whole'), decide: always }, { attempts: 1 })).rejects.toBeInstanceOf(WrongExpectedRevisionError);
  });

  it("starts from the caller's loaded state, decided once with attempts: 1", async () => {
    const store = new InMemoryEventStore();
    const loaded = await load(store, 's', counting('whole'));
    expect(loaded).toEqual({ state: 0, expected: 'no_stream' });
    await store.appendToStream('s', [{ ...named('first'), id: 'first' }]);
    let decisions = 0;
    const decide = () => (decisions++, [named('late')]);
    await expect(handle(store, { stream: 's', aggregate: counting('whole'), decide }, { loaded, attempts: 1 })).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    expect(decisions).toBe(1);
  });

  it("reads only the first event of a 'first' aggregate, and then only expects the stream to exist", async () => {
    const store = new InMemoryEventStore();
    await store.appendToStream('s', ['a', 'b', 'c'].map((n) => ({ ...named(n), id: n })));
    expect(await load(store, 's', counting('first'))).toEqual({ state: 1, expected: 'stream_exists' });
    expect(await load(store, 's', counting('whole'))).toEqual({ state: 3, expected: 2n });
  });
});

describe('claim decisions', () => {
  const claim: DomainEvent & { type: 'ImeiClaimed' } = {
    type: 'ImeiClaimed',
    data: { device_id: 'dev_new', customer_id: 'cus_a', imei: '1', model: 'm', terminal_id: null, claimed_at: T0 },
  };
  const holder = { ownerStream: 'device-dev_old', claimedAt: T0 };

  it('takes a free claim; a recent one is held; an old one is held only by an owner that exists', () => {
    expect(decideClaim({ holder: null }, claim, T0, false)).toEqual([claim]);
    expect(decideClaim({ holder }, claim, T0 + STALE_CLAIM_MS - 1, false)).toEqual([]);
    expect(decideClaim({ holder }, claim, T0 + STALE_CLAIM_MS, true)).toEqual([]);
    expect(decideClaim({ holder }, claim, T0 + STALE_CLAIM_MS, false)).toEqual([claim]);
  });

  it('releases only a claim still held by the owner that took it', () => {
    const release: DomainEvent = { type: 'ImeiReleased', data: { device_id: 'dev_old', imei: '1', released_at: T0 } };
    expect(decideRelease({ holder }, { stream: 'imei-1', ownerStream: 'device-dev_old' }, release)).toEqual([release]);
    expect(decideRelease({ holder: { ...holder, ownerStream: 'device-dev_other' } }, { stream: 'imei-1', ownerStream: 'device-dev_old' }, release)).toEqual([]);
    expect(decideRelease({ holder: null }, { stream: 'imei-1', ownerStream: 'device-dev_old' }, release)).toEqual([]);
  });
});
