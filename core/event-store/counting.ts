/**
 * Counts appends for /metrics without touching either adapter: a thin
 * decorator the composition root puts around the store it opened. It also
 * records whether the store last wrote or failed to (write-health.ts reads it).
 */
import { systemClock, type Clock } from '../clock.js';
import type { EventStore } from './port.js';
import { writeFailureCode, type WriteOutcome } from './write-health.js';

export interface AppendCounts {
  /** appendToStream calls that resolved. */
  appends: number;
  /** Events in those calls (duplicates by id included: the caller sent them). */
  events: number;
  /** appendToStream calls that rejected (conflicts and failures). */
  failures: number;
  /** Those the store could not write (StoreWriteError), by code: SQLITE_FULL, SQLITE_READONLY, ... */
  failuresByCode: Record<string, number>;
  /** The last commit or write failure of an append or a probe through this handle; null before the first. */
  lastWrite: WriteOutcome | null;
}

export function newAppendCounts(): AppendCounts {
  return { appends: 0, events: 0, failures: 0, failuresByCode: {}, lastWrite: null };
}

/** The counts of several handles (the platform thread's and the gateway thread's) as one. */
export function sumAppendCounts(all: readonly AppendCounts[]): AppendCounts {
  const sum = newAppendCounts();
  for (const c of all) {
    sum.appends += c.appends;
    sum.events += c.events;
    sum.failures += c.failures;
    for (const [code, n] of Object.entries(c.failuresByCode)) sum.failuresByCode[code] = (sum.failuresByCode[code] ?? 0) + n;
    if (c.lastWrite && (!sum.lastWrite || c.lastWrite.at > sum.lastWrite.at)) sum.lastWrite = c.lastWrite;
  }
  return sum;
}

export function countAppends(store: EventStore, clock: Clock = systemClock): { store: EventStore; counts: AppendCounts } {
  const counts = newAppendCounts();
  /** A conflict or a refused input changes nothing: the store itself still writes. A probe is no append: not counted. */
  const failed = (err: unknown, append: boolean): void => {
    const code = writeFailureCode(err);
    if (code === null) return;
    if (append) counts.failuresByCode[code] = (counts.failuresByCode[code] ?? 0) + 1;
    counts.lastWrite = { at: clock.now(), code };
  };
  const counted: EventStore = {
    async appendToStream(stream, events, options) {
      // Only the count outlives the call: held until the commit, the events (and a gateway frame's decoded
      // records) were still alive at every young-generation collection meanwhile, and each one copied them.
      const eventCount = events.length;
      try {
        const result = await store.appendToStream(stream, events, options);
        counts.appends += 1;
        counts.events += eventCount;
        counts.lastWrite = { at: clock.now(), code: null };
        return result;
      } catch (err) {
        counts.failures += 1;
        failed(err, true);
        throw err;
      }
    },
    readStream: (stream, options) => store.readStream(stream, options),
    readAll: (options) => store.readAll(options),
    subscribeToAll: (options) => store.subscribeToAll(options),
    close: () => store.close(),
  };
  if (store.probeWrite) {
    const probe = store.probeWrite.bind(store);
    counted.probeWrite = async () => {
      try {
        await probe();
      } catch (err) {
        failed(err, false);
        throw err;
      }
      counts.lastWrite = { at: clock.now(), code: null };
    };
  }
  return { store: counted, counts };
}
