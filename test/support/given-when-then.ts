/**
 * Command tests as given / when / then, on the in-memory store (no files, no threads):
 * given these events in these streams, when this command runs, then exactly these
 * events were appended, or this refusal.
 */
import { ManualClock } from '../../core/clock.js';
import { CommandRejected } from '../../core/commands/rejection.js';
import type { DomainEvent } from '../../core/events.js';
import { InMemoryEventStore } from '../../core/event-store/memory.js';
import type { EventStore } from '../../core/event-store/port.js';

export const T0 = Date.UTC(2026, 2, 1, 8, 0, 0);

/** Events by stream, in order; as appended, they carry only their type and data. */
export type Streams = Record<string, DomainEvent[]>;

export interface Then<R> {
  /** What the command returned; undefined when it was refused. */
  result: R | undefined;
  rejection: CommandRejected | undefined;
  /** The events the command appended, by stream (none: `{}`). */
  appended: Streams;
  /** The refusal, or an error saying what happened instead. */
  refused(): CommandRejected;
  store: EventStore;
  clock: ManualClock;
}

/** `now`: the clock when the command runs (the history is written at T0). */
export function given(history: Readonly<Record<string, readonly DomainEvent[]>> = {}, options: { now?: number } = {}) {
  return {
    async when<R>(command: (store: EventStore, clock: ManualClock) => Promise<R>): Promise<Then<R>> {
      const clock = new ManualClock(T0);
      const store = new InMemoryEventStore({ clock });
      let n = 0;
      for (const [stream, events] of Object.entries(history)) {
        await store.appendToStream(stream, events.map((e) => ({ ...e, id: `given-${++n}` })));
      }
      const last = (await store.readAll({ maxCount: Number.MAX_SAFE_INTEGER })).at(-1);
      if (options.now !== undefined) clock.set(options.now);
      let result: R | undefined;
      let rejection: CommandRejected | undefined;
      try {
        result = await command(store, clock);
      } catch (err) {
        if (!(err instanceof CommandRejected)) throw err;
        rejection = err;
      }
      const appended: Streams = {};
      for (const e of await store.readAll({ after: last?.position, maxCount: Number.MAX_SAFE_INTEGER })) {
        (appended[e.stream] ??= []).push({ type: e.type, data: e.data } as DomainEvent);
      }
      const refused = () => {
        if (rejection) return rejection;
        throw new Error(`expected a refusal; the command returned ${String(result)} and appended to ${JSON.stringify(Object.keys(appended))}`);
      };
      return { result, rejection, appended, refused, store, clock };
    },
  };
}
