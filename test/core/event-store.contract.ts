/**
 * The event store contract: every adapter must pass it. Streams get a random
 * suffix so the suite can run against a shared EventStoreDB server.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../core/events.js';
import type { EventStore, EventToAppend, LogPosition, RecordedEvent } from '../../core/event-store/port.js';
import { WrongExpectedRevisionError, comparePositions } from '../../core/event-store/port.js';

function customerCreated(name: string): EventToAppend<DomainEvent> {
  return {
    id: randomUUID(),
    type: 'CustomerCreated',
    data: { customer_id: `cus_${name}`, name, plan: 'free', created_at: 1_700_000_000_000 },
  };
}

export interface ContractOptions {
  /**
   * The adapter writes an event id once in the whole log, checking the expected revision
   * first (SQLite, memory). EventStoreDB dedupes per stream and position, so it skips these.
   */
  logWideIds?: boolean;
  /**
   * The adapter writes an event id once per stream, checking the expected revision first
   * (EventStoreDB, whose adapter compares ids with the stream's tail).
   */
  streamWideIds?: boolean;
  /** Writes `count` system events ($-prefixed types) to the log, where the store can hold them. */
  systemEvents?: (count: number) => Promise<void>;
}

/** A position to subscribe after, read from an event (a real EventStoreDB refuses made-up ones). */
async function positionBefore(store: EventStore): Promise<LogPosition> {
  const marker = `contract-marker-${randomUUID().slice(0, 8)}`;
  await store.appendToStream(marker, [customerCreated('marker')]);
  return (await store.readStream(marker))[0]!.position;
}

export function eventStoreContract(name: string, open: () => Promise<EventStore>, options: ContractOptions = {}): void {
  describe(`event store contract: ${name}`, () => {
    const unique = () => `contract-${randomUUID().slice(0, 8)}`;

    it('appends to a new stream and reads it back in order', async () => {
      const store = await open();
      const stream = unique();
      const r = await store.appendToStream(stream, [customerCreated('a'), customerCreated('b')], {
        expectedRevision: 'no_stream',
      });
      expect(r.nextExpectedRevision).toBe(1n);
      const events = await store.readStream(stream);
      expect(events.map((e) => (e.data as { name: string }).name)).toEqual(['a', 'b']);
      expect(events.map((e) => e.revision)).toEqual([0n, 1n]);
      expect(events[0]!.type).toBe('CustomerCreated');
      await store.close();
    });

    it('enforces expectedRevision', async () => {
      const store = await open();
      const stream = unique();
      await store.appendToStream(stream, [customerCreated('a')], { expectedRevision: 'no_stream' });
      await expect(
        store.appendToStream(stream, [customerCreated('b')], { expectedRevision: 'no_stream' }),
      ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      await expect(
        store.appendToStream(stream, [customerCreated('b')], { expectedRevision: 5n }),
      ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      await expect(
        store.appendToStream(unique(), [customerCreated('b')], { expectedRevision: 'stream_exists' }),
      ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      const ok = await store.appendToStream(stream, [customerCreated('c')], { expectedRevision: 0n });
      expect(ok.nextExpectedRevision).toBe(1n);
      await store.close();
    });

    it('a failed append in a concurrent batch does not affect the others', async () => {
      const store = await open();
      const a = unique();
      const b = unique();
      await store.appendToStream(a, [customerCreated('a0')]);
      const results = await Promise.allSettled([
        store.appendToStream(a, [customerCreated('a1')], { expectedRevision: 'no_stream' }),
        store.appendToStream(b, [customerCreated('b0')], { expectedRevision: 'no_stream' }),
      ]);
      expect(results[0]!.status).toBe('rejected');
      expect(results[1]!.status).toBe('fulfilled');
      expect(await store.readStream(a)).toHaveLength(1);
      expect(await store.readStream(b)).toHaveLength(1);
      await store.close();
    });

    it('is idempotent on event ids', async () => {
      const store = await open();
      const stream = unique();
      const e = customerCreated('once');
      await store.appendToStream(stream, [e]);
      await store.appendToStream(stream, [e]);
      expect(await store.readStream(stream)).toHaveLength(1);
      await store.close();
    });

    describe.runIf(options.logWideIds || options.streamWideIds)('event ids are unique in each stream', () => {
      it('acknowledges a resend, whole or partly overlapping, and stores each event once', async () => {
        const store = await open();
        const stream = unique();
        const [a, b, c] = ['a', 'b', 'c'].map(customerCreated);
        const first = await store.appendToStream(stream, [a!, b!], { expectedRevision: 'no_stream' });
        // A resend of the whole append: the stream's last revision and position, nothing written.
        expect(await store.appendToStream(stream, [a!, b!])).toEqual(first);
        const overlapping = await store.appendToStream(stream, [b!, c!], { expectedRevision: 1n });
        expect(overlapping.nextExpectedRevision).toBe(2n);
        expect(comparePositions(overlapping.position, first.position)).toBeGreaterThan(0);
        expect((await store.readStream(stream)).map((e) => [e.id, e.revision])).toEqual([
          [a!.id, 0n],
          [b!.id, 1n],
          [c!.id, 2n],
        ]);
        await store.close();
      });

      it('checks the expected revision before dropping duplicates', async () => {
        const store = await open();
        const stream = unique();
        const a = customerCreated('a');
        await store.appendToStream(stream, [a], { expectedRevision: 'no_stream' });
        await expect(store.appendToStream(stream, [a], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(WrongExpectedRevisionError);
        expect(await store.readStream(stream)).toHaveLength(1);
        await store.close();
      });
    });

    describe.runIf(options.logWideIds)('event ids are unique in the whole log', () => {
      it('does not write an id stored in another stream, nor one repeated in the same append', async () => {
        const store = await open();
        const [one, two] = [unique(), unique()];
        const a = customerCreated('a');
        await store.appendToStream(one, [a]);
        // Only duplicates, to a stream without events: it still has none.
        const none = await store.appendToStream(two, [a]);
        expect(none.nextExpectedRevision).toBe(-1n);
        expect(await store.readStream(two)).toEqual([]);
        const d = customerCreated('d');
        const written = await store.appendToStream(two, [a, d, d], { expectedRevision: 'no_stream' });
        expect(written.nextExpectedRevision).toBe(0n);
        expect((await store.readStream(two)).map((e) => e.id)).toEqual([d.id]);
        expect((await store.readStream(one)).map((e) => e.id)).toEqual([a.id]);
        await store.close();
      });
    });

    it('reads a missing stream as empty, and backwards with a limit', async () => {
      const store = await open();
      expect(await store.readStream(unique())).toEqual([]);
      const stream = unique();
      await store.appendToStream(stream, ['a', 'b', 'c'].map(customerCreated));
      const back = await store.readStream(stream, { direction: 'backwards', maxCount: 2 });
      expect(back.map((e) => (e.data as { name: string }).name)).toEqual(['c', 'b']);
      const from1 = await store.readStream(stream, { fromRevision: 1n });
      expect(from1.map((e) => e.revision)).toEqual([1n, 2n]);
      await store.close();
    });

    it('readAll returns events after a position in commit order', async () => {
      const store = await open();
      const s1 = unique();
      const s2 = unique();
      const first = await store.appendToStream(s1, [customerCreated('x')]);
      await store.appendToStream(s2, [customerCreated('y')]);
      await store.appendToStream(s1, [customerCreated('z')]);
      const after = await store.readAll({ after: first.position, maxCount: 100 });
      const mine = after.filter((e) => e.stream === s1 || e.stream === s2);
      expect(mine.map((e) => (e.data as { name: string }).name)).toEqual(['y', 'z']);
      for (let i = 1; i < after.length; i++) {
        expect(comparePositions(after[i - 1]!.position, after[i]!.position)).toBeLessThan(0);
      }
      await store.close();
    });

    it('reads and follows the log without the event types asked to skip', async () => {
      const store = await open();
      const stream = unique();
      const skipped = (i: number) => ({ ...customerCreated(`skipped ${i}`), type: 'Skipped' }) as unknown as EventToAppend<DomainEvent>;
      const before = await positionBefore(store);
      const first = await store.appendToStream(stream, [customerCreated('a')]);
      // More skipped events than a subscription reads at once.
      await store.appendToStream(stream, Array.from({ length: 2500 }, (_, i) => skipped(i)));
      await store.appendToStream(stream, [customerCreated('b'), skipped(-1), customerCreated('c')]);
      const names = (events: RecordedEvent[]) => events.filter((e) => e.stream === stream).map((e) => (e.data as { name: string }).name);
      expect(names(await store.readAll({ after: first.position, maxCount: 100, skipTypes: ['Skipped'] }))).toEqual(['b', 'c']);
      // maxCount counts the events read, not those skipped.
      expect(names(await store.readAll({ after: first.position, maxCount: 1, skipTypes: ['Skipped'] }))).toEqual(['b']);
      expect(await store.readAll({ after: first.position, maxCount: 10 })).toHaveLength(10);

      const sub = store.subscribeToAll({ after: before, skipTypes: ['Skipped'] });
      const seen: string[] = [];
      const done = (async () => {
        for await (const e of sub) {
          if (e.stream !== stream) continue;
          seen.push((e.data as { name: string }).name);
          if (seen.length === 4) break;
        }
      })();
      await store.appendToStream(stream, [skipped(-2)]);
      await store.appendToStream(stream, [customerCreated('d')]);
      await done;
      await sub.close();
      expect(seen).toEqual(['a', 'b', 'c', 'd']);
      await store.close();
    });

    it('reads and follows only the event types asked for, moving past the others', async () => {
      const store = await open();
      const stream = unique();
      // A type of this run alone: a shared server holds other runs' events.
      const keptType = `Kept${randomUUID().slice(0, 8)}`;
      const kept = (name: string) => ({ ...customerCreated(name), type: keptType }) as unknown as EventToAppend<DomainEvent>;
      const before = await positionBefore(store);
      const first = await store.appendToStream(stream, [kept('a')]);
      // More events of other types than a subscription reads at once.
      await store.appendToStream(stream, Array.from({ length: 2500 }, (_, i) => customerCreated(`other ${i}`)));
      await store.appendToStream(stream, [kept('b'), customerCreated('other'), kept('c')]);
      const names = (events: RecordedEvent[]) => events.map((e) => `${e.type === keptType ? '' : e.type + ':'}${(e.data as { name: string }).name}`);
      expect(names(await store.readAll({ after: before, maxCount: 100, onlyTypes: [keptType] }))).toEqual(['a', 'b', 'c']);
      // maxCount counts the events read, not those passed over.
      expect(names(await store.readAll({ after: first.position, maxCount: 1, onlyTypes: [keptType] }))).toEqual(['b']);
      const mixed = await store.readAll({ after: first.position, maxCount: 3000, onlyTypes: [keptType, 'CustomerCreated'] });
      expect(mixed.filter((e) => e.stream === stream)).toHaveLength(2503);

      const sub = store.subscribeToAll({ after: before, onlyTypes: [keptType] });
      const seen: string[] = [];
      const done = (async () => {
        for await (const e of sub) {
          seen.push(...names([e]));
          if (seen.length === 4) break;
        }
      })();
      await store.appendToStream(stream, [customerCreated('other, live')]);
      await store.appendToStream(stream, [kept('d')]);
      await done;
      await sub.close();
      expect(seen).toEqual(['a', 'b', 'c', 'd']);
      await store.close();
    });

    it('a subscription from the end delivers only what is appended after it started', async () => {
      const store = await open();
      const stream = unique();
      await store.appendToStream(stream, [customerCreated('old')]);
      const sub = store.subscribeToAll({ after: 'end', onlyTypes: ['CustomerCreated'] });
      const seen: string[] = [];
      let stop = false;
      const done = (async () => {
        for await (const e of sub) {
          if (e.stream !== stream) continue;
          seen.push((e.data as { name: string }).name);
          break;
        }
        stop = true;
      })();
      // Where the end is found when the subscription first reads: append until it sees something.
      for (let i = 0; !stop; i++) {
        await store.appendToStream(stream, [customerCreated(`new ${i}`)]);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await done;
      await sub.close();
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatch(/^new \d+$/);
      await store.close();
    });

    it('refuses a read given both skipTypes and onlyTypes, or no type to keep', async () => {
      const store = await open();
      await expect(store.readAll({ skipTypes: ['A'], onlyTypes: ['B'] })).rejects.toThrow(/skipTypes or onlyTypes/);
      await expect(store.readAll({ onlyTypes: [] })).rejects.toThrow(/at least one event type/);
      expect(() => store.subscribeToAll({ skipTypes: ['A'], onlyTypes: ['B'] })).toThrow(/skipTypes or onlyTypes/);
      await store.close();
    });

    it('a catch-up subscription delivers history, then live events', async () => {
      const store = await open();
      const stream = unique();
      const before = await positionBefore(store);
      await store.appendToStream(stream, [customerCreated('old')]);
      const sub = store.subscribeToAll({ after: before });
      const seen: RecordedEvent[] = [];
      const done = (async () => {
        for await (const e of sub) {
          if (e.stream !== stream) continue;
          seen.push(e);
          if (seen.length === 2) break;
        }
      })();
      await store.appendToStream(stream, [customerCreated('new')]);
      await done;
      await sub.close();
      expect(seen.map((e) => (e.data as { name: string }).name)).toEqual(['old', 'new']);
      await store.close();
    });

    it('acknowledges a resend after other appends and stores it once', async () => {
      const store = await open();
      const stream = unique();
      const [a, b] = ['a', 'b'].map(customerCreated);
      await store.appendToStream(stream, [a!, b!]);
      // More events since than a server remembers ids of for `any` appends.
      await store.appendToStream(stream, Array.from({ length: 100 }, (_, i) => customerCreated(`later ${i}`)));
      await store.appendToStream(unique(), [customerCreated('elsewhere')]);
      await store.appendToStream(stream, [customerCreated('last')]);
      const resent = await store.appendToStream(stream, [a!, b!]);
      expect(resent.nextExpectedRevision).toBe(102n);
      const ids = (await store.readStream(stream)).map((e) => e.id);
      expect(ids).toHaveLength(103);
      expect(ids.filter((id) => id === a!.id || id === b!.id)).toEqual([a!.id, b!.id]);
      await store.close();
    });

    it('stores only the new events of a partly overlapping resend', async () => {
      const store = await open();
      const stream = unique();
      const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(customerCreated);
      await store.appendToStream(stream, [a!, b!]);
      const overlapping = await store.appendToStream(stream, [b!, c!]);
      expect(overlapping.nextExpectedRevision).toBe(2n);
      // The resend's first event is the stream's first: still only the last one is new.
      await store.appendToStream(stream, [a!, b!, c!, d!]);
      expect((await store.readStream(stream)).map((e) => [e.id, e.revision])).toEqual([
        [a!.id, 0n],
        [b!.id, 1n],
        [c!.id, 2n],
        [d!.id, 3n],
      ]);
      await store.close();
    });

    it('closes after a read stopped early', async () => {
      const store = await open();
      const stream = unique();
      const before = await positionBefore(store);
      await store.appendToStream(stream, Array.from({ length: 20 }, (_, i) => customerCreated(`e${i}`)));
      expect(await store.readAll({ after: before, maxCount: 3 })).toHaveLength(3);
      expect(await store.readStream(stream, { maxCount: 2 })).toHaveLength(2);
      const sub = store.subscribeToAll({ after: before });
      for await (const e of sub) if (e.stream === stream) break;
      // A read or subscription left open would hold close() and, with it, the process's exit.
      let timer: NodeJS.Timeout | undefined;
      const closed = await Promise.race([
        store.close().then(() => 'closed'),
        new Promise((resolve) => (timer = setTimeout(resolve, 5_000, 'still open'))),
      ]);
      clearTimeout(timer);
      expect(closed).toBe('closed');
    });

    it.runIf(options.systemEvents)('reads past pages full of system events', async () => {
      const store = await open();
      const stream = unique();
      const first = await store.appendToStream(stream, [customerCreated('a')]);
      await options.systemEvents!(3_000);
      await store.appendToStream(stream, [customerCreated('b'), customerCreated('c')]);
      const page = await store.readAll({ after: first.position, maxCount: 2 });
      // A short page would read as the end of the log to a caller.
      expect(page).toHaveLength(2);
      expect(page.filter((e) => e.type.startsWith('$'))).toEqual([]);
      const names = (await store.readAll({ after: first.position, maxCount: 100 })).filter((e) => e.stream === stream).map((e) => (e.data as { name: string }).name);
      expect(names).toEqual(['b', 'c']);
      await store.close();
    });
  });
}
