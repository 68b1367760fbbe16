/**
 * An event store held in this process's memory: the whole port, with the SQLite
 * adapter's semantics (an event id is written once in the whole log, the expected
 * revision is checked before duplicates are dropped, positions count from 1). It is
 * for tests and tools that need a log without files or threads; it passes the same
 * contract suite (test/core/event-store.contract.ts). Events are kept as JSON text,
 * as SQLite keeps them, so a reader never shares an object with the store or with
 * the appender.
 */
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { DomainEvent } from '../events.js';
import {
  type AppendResult,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type LogPosition,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeToAllOptions,
  type Subscription,
  WrongExpectedRevisionError,
  typeTestOf,
} from './port.js';

/** One event of the log; its position is its index + 1. */
interface StoredEvent {
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  created: number;
}

/** Events a subscriber takes per turn of the event loop, so a long backlog leaves timers and I/O their turns. */
const FOLLOW_BATCH = 1000;

export class InMemoryEventStore implements EventStore {
  private readonly log: StoredEvent[] = [];
  /** Stream name -> log indexes of its events, in revision order. */
  private readonly streams = new Map<string, number[]>();
  private readonly ids = new Set<string>();
  private readonly clock: Clock;
  /** Subscribers waiting for the next append (or for the store to close). */
  private readonly waiting = new Set<() => void>();
  private closed = false;

  constructor(options: { clock?: Clock } = {}) {
    this.clock = options.clock ?? systemClock;
  }

  async appendToStream(stream: string, events: EventToAppend[], options: { expectedRevision?: ExpectedRevision } = {}): Promise<AppendResult> {
    if (this.closed) throw new Error('event store is closed');
    const expected = options.expectedRevision ?? 'any';
    // Encoded first: an append whose data is not JSON fails whole, writing nothing.
    const encoded = events.map((e) => {
      if (typeof e.id !== 'string') throw new Error(`event of type ${e.type} has no id`);
      const data = JSON.stringify(e.data);
      if (typeof data !== 'string') throw new Error(`event ${e.id} has no JSON data`);
      return { id: e.id, type: e.type, data, metadata: e.metadata ? JSON.stringify(e.metadata) : '{}' };
    });
    const indexes = this.streams.get(stream);
    const current = indexes ? indexes.length - 1 : -1;
    const holds =
      expected === 'any' ||
      (expected === 'no_stream' && current === -1) ||
      (expected === 'stream_exists' && current !== -1) ||
      expected === BigInt(current);
    if (!holds) throw new WrongExpectedRevisionError(stream, expected, current === -1 ? 'no_stream' : BigInt(current));

    const created = this.clock.now();
    const mine = indexes ?? [];
    let written = 0;
    for (const e of encoded) {
      // Idempotence: an id already in the log (this append's own included) is acknowledged, not written again.
      if (this.ids.has(e.id)) continue;
      this.ids.add(e.id);
      mine.push(this.log.length);
      this.log.push({ ...e, stream, revision: mine.length - 1, created });
      written += 1;
    }
    if (mine.length > 0) this.streams.set(stream, mine);
    if (written > 0) this.wakeFollowers();
    // Every id a duplicate: the stream's last event, as SQLite answers.
    const last = mine.at(-1);
    const position = last === undefined ? -1n : BigInt(last + 1);
    return { nextExpectedRevision: BigInt(mine.length - 1), position: { commit: position, prepare: position } };
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const indexes = this.streams.get(stream);
    const max = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    if (!indexes || max <= 0) return [];
    const direction = options.direction ?? 'forwards';
    const from = options.fromRevision ?? (direction === 'forwards' ? 'start' : 'end');
    const out: RecordedEvent[] = [];
    if (direction === 'forwards') {
      const first = from === 'start' ? 0 : from === 'end' ? indexes.length : Number(from);
      for (let r = Math.max(0, first); r < indexes.length && out.length < max; r++) out.push(this.recorded(indexes[r]!));
    } else {
      const first = from === 'end' ? indexes.length - 1 : from === 'start' ? 0 : Math.min(Number(from), indexes.length - 1);
      for (let r = first; r >= 0 && out.length < max; r--) out.push(this.recorded(indexes[r]!));
    }
    return out;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.readAfter(afterIndex(options.after), options.maxCount ?? 1000, typeTestOf(options)).events;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): Subscription {
    const keeps = typeTestOf(options);
    const cursor = options.after === 'end' ? this.log.length : afterIndex(options.after);
    const state = { cursor, stopped: false, wake: null as (() => void) | null };
    const stop = () => {
      state.stopped = true;
      if (state.wake) this.waiting.delete(state.wake);
      state.wake?.();
    };
    const follow = async function* (this: InMemoryEventStore): AsyncGenerator<RecordedEvent> {
      try {
        while (!state.stopped && !this.closed) {
          const { events, through } = this.readAfter(state.cursor, FOLLOW_BATCH, keeps);
          state.cursor = through;
          for (const e of events) {
            if (state.stopped) return;
            yield e;
          }
          if (events.length > 0) {
            await new Promise<void>((resolve) => setImmediate(resolve));
            continue;
          }
          await new Promise<void>((resolve) => {
            state.wake = resolve;
            this.waiting.add(resolve);
          });
          state.wake = null;
        }
      } finally {
        state.stopped = true;
      }
    };
    return {
      close: async () => stop(),
      [Symbol.asyncIterator]: () => follow.call(this),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeFollowers();
  }

  /**
   * Up to `maxCount` events after log index `after` (a count of events), and the index read
   * through: past events of types left out too, so a follower does not read them again.
   */
  private readAfter(after: number, maxCount: number, keeps: ((type: string) => boolean) | null): { events: RecordedEvent[]; through: number } {
    const events: RecordedEvent[] = [];
    let i = Math.max(0, after);
    for (; i < this.log.length && events.length < maxCount; i++) {
      if (keeps && !keeps(this.log[i]!.type)) continue;
      events.push(this.recorded(i));
    }
    return { events, through: i };
  }

  private recorded(index: number): RecordedEvent {
    const e = this.log[index]!;
    const position: LogPosition = { commit: BigInt(index + 1), prepare: BigInt(index + 1) };
    return {
      id: e.id,
      stream: e.stream,
      revision: BigInt(e.revision),
      position,
      type: e.type,
      data: JSON.parse(e.data) as unknown,
      metadata: JSON.parse(e.metadata) as Record<string, unknown>,
      created: e.created,
    } as RecordedEvent<DomainEvent>;
  }

  private wakeFollowers(): void {
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const wake of waiting) wake();
  }
}

/** The log index a read after `position` starts at: positions count from 1, so it is the position itself. */
function afterIndex(position: LogPosition | undefined): number {
  return position ? Math.max(0, Number(position.commit)) : 0;
}
