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
      try {
        const result = await store.appendToStream(stream, events, options);
        counts.appends += 1;
        counts.events += events.length;
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
