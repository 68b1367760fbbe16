/**
 * An in-process stand-in for the part of @eventstore/db-client the EventStoreDB adapter uses
 * (core/event-store/esdb-client.ts), with the server's documented semantics where they differ
 * from the port's, so the adapter's answers to them run without a server:
 * - idempotency per stream only; with `any` (and `stream_exists`) only against a bounded cache of
 *   recent ids, and a resend overlapping the stored events only partly is WrongExpectedVersion;
 *   with an exact revision, against the events after that revision;
 * - `maxCount` of readAll counts system events ($-prefixed types), which the log holds too;
 * - positions are byte offsets: the events of one append share their commit position (the end
 *   of the append) and differ in prepare; reads and subscriptions refuse any position that is not
 *   a record's with OUT_OF_RANGE "Invalid position", as the server does;
 * - a read or subscription left without being read to its end or cancelled keeps its call open,
 *   and dispose() waits for every open call, as the real client does;
 * - a subscription's regex filter applies on the server, to the event type or the stream name.
 */
import {
  StreamNotFoundError,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type AppendResult,
  type EventData,
  type Filter,
  type ReadPosition,
  type ReadRevision,
  type ResolvedEvent,
} from '@eventstore/db-client';
import type { EsdbClient, EsdbRead, EsdbSubscription } from '../../core/event-store/esdb-client.js';

interface Position {
  commit: bigint;
  prepare: bigint;
}

interface StoredRecord {
  streamId: string;
  id: string;
  revision: bigint;
  type: string;
  data: unknown;
  metadata: unknown;
  created: Date;
  position: Position;
}

export interface FakeEsdbOptions {
  /** How many recent event ids the server remembers for `any` appends. */
  idempotencyCache?: number;
  /** A system event is written after every this many appends (0: only those asked for). */
  systemEventEvery?: number;
}

/** The counts a test checks: calls still open, reads cancelled, whether dispose() returned, records a subscription's filter held back. */
export interface FakeEsdbCalls {
  open: number;
  cancelled: number;
  disposed: boolean;
  filteredOut: number;
}

const before = (a: Position, b: Position) => a.commit < b.commit || (a.commit === b.commit && a.prepare < b.prepare);
const same = (a: Position, b: Position) => a.commit === b.commit && a.prepare === b.prepare;

export class FakeEsdbClient implements EsdbClient {
  readonly calls: FakeEsdbCalls = { open: 0, cancelled: 0, disposed: false, filteredOut: 0 };
  private readonly log: StoredRecord[] = [];
  private readonly streams = new Map<string, StoredRecord[]>();
  private readonly recentIds = new Map<string, StoredRecord>();
  private readonly live = new Set<(r: StoredRecord) => void>();
  private readonly idle = new Set<() => void>();
  private offset = 0n;
  private appends = 0;

  constructor(private readonly options: FakeEsdbOptions = {}) {}

  async appendToStream(stream: string, events: EventData[], options: { expectedRevision: AppendExpectedRevision }): Promise<AppendResult> {
    await Promise.resolve();
    const stored = this.streams.get(stream) ?? [];
    const current = stored.length === 0 ? 'no_stream' : BigInt(stored.length - 1);
    const expected = options.expectedRevision;
    const refuse = () =>
      new WrongExpectedVersionError(undefined, { streamName: stream, expected, current: current === 'no_stream' ? 'no_stream' : current });
    const idempotent = (from: number): AppendResult | null => {
      // Every event must be the stored one at its place, else the server refuses the resend.
      const all = events.every((e, i) => stored[from + i]?.id === e.id);
      if (!all) throw refuse();
      const last = stored[from + events.length - 1]!;
      return { success: true, nextExpectedRevision: BigInt(stored.length - 1), position: last.position };
    };
    if (expected === 'any' || expected === 'stream_exists') {
      if (expected === 'stream_exists' && current === 'no_stream') throw refuse();
      const seen = events[0] && this.recentIds.get(events[0].id);
      if (seen && seen.streamId === stream) return idempotent(Number(seen.revision))!;
    } else {
      const at = expected === 'no_stream' ? -1n : expected;
      const now = current === 'no_stream' ? -1n : current;
      if (at > now) throw refuse();
      if (at < now) return idempotent(Number(at) + 1)!;
    }
    const written = this.write(stream, events.map((e) => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata })));
    this.appends++;
    const every = this.options.systemEventEvery ?? 0;
    if (every > 0 && this.appends % every === 0) this.writeSystemEvents(1);
    return { success: true, nextExpectedRevision: written.at(-1)!.revision, position: written.at(-1)!.position };
  }

  /** Records of `$`-prefixed types, as the server writes to its own streams ($stats-…, $metadata). */
  writeSystemEvents(count: number): void {
    for (let i = 0; i < count; i++) {
      this.write('$stats-fake', [{ id: crypto.randomUUID(), type: '$statsCollected', data: { i }, metadata: {} }]);
    }
  }

  readStream(stream: string, options: { direction: string; fromRevision: ReadRevision; maxCount?: number | bigint }): EsdbRead<ResolvedEvent> {
    return this.read(() => {
      const stored = this.streams.get(stream);
      if (!stored || stored.length === 0) throw new StreamNotFoundError(undefined, stream);
      const max = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
      const { fromRevision: from } = options;
      if (options.direction === 'forwards') {
        const start = from === 'start' ? 0 : from === 'end' ? stored.length : Number(from);
        return stored.slice(start, start + max);
      }
      const start = from === 'end' ? stored.length - 1 : from === 'start' ? -1 : Math.min(Number(from), stored.length - 1);
      return stored.slice(Math.max(0, start - max + 1), start + 1).reverse();
    });
  }

  readAll(options: { direction: string; fromPosition: ReadPosition; maxCount?: number | bigint }): EsdbRead<AllStreamResolvedEvent> {
    return this.read(() => {
      if (options.direction !== 'forwards') throw new Error('the fake reads $all forwards only');
      const start = this.indexOf(options.fromPosition, 'inclusive');
      return this.log.slice(start, start + Number(options.maxCount ?? Number.MAX_SAFE_INTEGER));
    });
  }

  subscribeToAll(options: { fromPosition: ReadPosition; filter?: Filter }): EsdbSubscription {
    const calls = this.calls;
    const queue: StoredRecord[] = [];
    let wake: (() => void) | null = null;
    let ended = false;
    let failure: unknown = null;
    const filter = options.filter && 'regex' in options.filter ? options.filter : null;
    const regex = filter ? new RegExp(filter.regex) : null;
    const push = (r: StoredRecord) => {
      if (regex && !regex.test(filter!.filterOn === 'streamName' ? r.streamId : r.type)) {
        calls.filteredOut++;
        return;
      }
      queue.push(r);
      wake?.();
    };
    try {
      for (const r of this.log.slice(this.indexOf(options.fromPosition, 'exclusive'))) push(r);
    } catch (err) {
      failure = err;
    }
    this.live.add(push);
    calls.open++;
    const end = () => {
      if (ended) return;
      ended = true;
      this.live.delete(push);
      this.finish();
      wake?.();
    };
    return {
      unsubscribe: async () => end(),
      async *[Symbol.asyncIterator]() {
        while (!ended) {
          if (failure) {
            const err = failure;
            end();
            throw err;
          }
          const next = queue.shift();
          if (next) {
            yield resolved(next);
            continue;
          }
          await new Promise<void>((resolve) => (wake = resolve));
          wake = null;
        }
      },
    };
  }

  /** Like the client's: returns once every call it opened has finished, so a leaked read holds it. */
  async dispose(): Promise<void> {
    while (this.calls.open > 0) await new Promise<void>((resolve) => this.idle.add(resolve));
    this.calls.disposed = true;
  }

  private write(stream: string, events: Array<Omit<StoredRecord, 'streamId' | 'revision' | 'created' | 'position'>>): StoredRecord[] {
    const stored = this.streams.get(stream) ?? [];
    this.streams.set(stream, stored);
    const sizes = events.map((e) => 64n + BigInt(JSON.stringify(e.data ?? null).length));
    const commit = this.offset + sizes.reduce((a, b) => a + b, 0n);
    const written = events.map((e, i) => {
      const prepare = this.offset;
      this.offset += sizes[i]!;
      return { ...e, streamId: stream, revision: BigInt(stored.length + i), created: new Date(), position: { commit, prepare } };
    });
    // The commit record the events share takes room of its own.
    this.offset += 32n;
    stored.push(...written);
    this.log.push(...written);
    const cache = this.options.idempotencyCache ?? 64;
    for (const r of written) {
      this.recentIds.delete(r.id);
      this.recentIds.set(r.id, r);
      if (this.recentIds.size > cache) this.recentIds.delete(this.recentIds.keys().next().value!);
    }
    for (const push of this.live) for (const r of written) push(r);
    return written;
  }

  /** Index of the first record at (inclusive) or after (exclusive) a position; refuses positions off a record. */
  private indexOf(from: ReadPosition, mode: 'inclusive' | 'exclusive'): number {
    if (from === 'start') return 0;
    if (from === 'end') return this.log.length;
    const i = this.log.findIndex((r) => !before(r.position, from));
    const at = this.log[i];
    if (i === -1 || !same(at!.position, from)) {
      throw Object.assign(new Error('11 OUT_OF_RANGE: Invalid position.'), { type: 'unknown', code: 11, details: 'Invalid position.' });
    }
    return mode === 'inclusive' ? i : i + 1;
  }

  private read<E>(records: () => StoredRecord[]): EsdbRead<E> {
    const calls = this.calls;
    calls.open++;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      this.finish();
    };
    return {
      cancel: async () => {
        if (!finished) calls.cancelled++;
        finish();
      },
      // Leaving the loop early does not end the call: only cancel() or reading to the end does.
      async *[Symbol.asyncIterator]() {
        await Promise.resolve();
        let list: StoredRecord[];
        try {
          list = records();
        } catch (err) {
          finish();
          throw err;
        }
        for (const r of list) yield resolved(r) as E;
        finish();
      },
    };
  }

  private finish(): void {
    this.calls.open--;
    if (this.calls.open > 0) return;
    for (const resolve of this.idle) resolve();
    this.idle.clear();
  }
}

function resolved(r: StoredRecord): AllStreamResolvedEvent & ResolvedEvent {
  const event = {
    streamId: r.streamId,
    id: r.id,
    isJson: true,
    revision: r.revision,
    type: r.type,
    created: r.created,
    data: structuredClone(r.data),
    metadata: structuredClone(r.metadata),
    position: { ...r.position },
  };
  return { event, commitPosition: r.position.commit } as unknown as AllStreamResolvedEvent & ResolvedEvent;
}
