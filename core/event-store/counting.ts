/**
 * Counts appends for /metrics without touching either adapter: a thin
 * decorator the composition root puts around the store it opened.
 */
import type { EventStore } from './port.js';

export interface AppendCounts {
  /** appendToStream calls that resolved. */
  appends: number;
  /** Events in those calls (duplicates by id included: the caller sent them). */
  events: number;
  /** appendToStream calls that rejected (conflicts and failures). */
  failures: number;
}

export function countAppends(store: EventStore): { store: EventStore; counts: AppendCounts } {
  const counts: AppendCounts = { appends: 0, events: 0, failures: 0 };
  const counted: EventStore = {
    async appendToStream(stream, events, options) {
      // Only the count outlives the call: held until the commit, the events (and a gateway frame's decoded
      // records) were still alive at every young-generation collection meanwhile, and each one copied them.
      const eventCount = events.length;
      try {
        const result = await store.appendToStream(stream, events, options);
        counts.appends += 1;
        counts.events += eventCount;
        return result;
      } catch (err) {
        counts.failures += 1;
        throw err;
      }
    },
    readStream: (stream, options) => store.readStream(stream, options),
    readAll: (options) => store.readAll(options),
    subscribeToAll: (options) => store.subscribeToAll(options),
    close: () => store.close(),
  };
  return { store: counted, counts };
}
