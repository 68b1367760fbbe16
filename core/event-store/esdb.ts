/**
 * EventStoreDB adapter (`esdb://` URLs) over @eventstore/db-client v6: what a fleet that outgrows
 * one machine runs on. System events ($-prefixed types) are never surfaced. Where the server's
 * semantics fall short of the port's, the adapter closes the gap (appends, readAll, positions).
 */
import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  eventTypeFilter,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamResolvedEvent,
  type JSONType,
} from '@eventstore/db-client';
import { type EsdbClient, type EsdbRead, asPositionError, isMalformed, positionOf, toRecorded } from './esdb-client.js';
import {
  type AppendResult,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  InvalidPositionError,
  type LogPosition,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeToAllOptions,
  type Subscription,
  WrongExpectedRevisionError,
  comparePositions,
  typeFilterOf,
  typeTestOf,
} from './port.js';
import { StoreWriteError } from './write-health.js';

export interface EsdbStoreOptions {
  /** The client to use instead of one opened from the connection string (tests inject a stand-in). */
  client?: EsdbClient;
  /**
   * How many of a stream's last events an append compares its ids with. A resend is caught when
   * the events it repeats are among them; one older than that is written again.
   */
  dedupeWindow?: number;
}

/** Covers a device's resend of unacknowledged frames and the outbox's resend of its last batch. */
export const DEDUPE_WINDOW = 256;
/** Events asked for per readAll page when types are skipped (system events are always). */
const PAGE = 1024;
/** Appends that lose the race for the stream's tail this many times in a row give up. */
const APPEND_ATTEMPTS = 10;

/** A stream's tail as an append sees it: the last revision, its position and the ids in the window. */
interface Tail {
  revision: bigint | 'no_stream';
  position: LogPosition;
  ids: ReadonlySet<string>;
}

export class EsdbEventStore implements EventStore {
  private readonly client: EsdbClient;
  private readonly dedupeWindow: number;
  private readonly reads = new Set<EsdbRead<unknown>>();
  private readonly subscriptions = new Set<Subscription>();
  private closing: Promise<void> | null = null;

  constructor(connectionString: string | null, options: EsdbStoreOptions = {}) {
    if (!options.client && !connectionString) throw new Error('EsdbEventStore needs a connection string or a client');
    this.client = options.client ?? (EventStoreDBClient.connectionString`${connectionString!}` as unknown as EsdbClient);
    this.dedupeWindow = Math.max(1, options.dedupeWindow ?? DEDUPE_WINDOW);
  }

  /**
   * EventStoreDB de-duplicates per stream only, and with `any` only against a bounded cache of
   * recent ids (a partly overlapping resend is refused). So every append reads the stream's tail,
   * checks the caller's expected revision against it, drops the ids already there, and appends
   * the rest at exactly the revision read: a concurrent writer makes it read again, never write
   * an id twice. Ids are unique per stream, not in the whole log.
   */
  async appendToStream(
    stream: string,
    events: EventToAppend[],
    options: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    const expected = options.expectedRevision ?? 'any';
    for (let attempt = 1; ; attempt++) {
      const tail = await this.readTail(stream, events.length).catch((err: unknown) => {
        // Part of the append: write health counts a server that cannot be read as one not writing.
        throw asWriteError(err);
      });
      if (!holds(expected, tail.revision)) throw new WrongExpectedRevisionError(stream, expected, tail.revision);
      const fresh = withoutDuplicates(events, tail.ids);
      if (fresh.length === 0) {
        return { nextExpectedRevision: tail.revision === 'no_stream' ? -1n : tail.revision, position: tail.position };
      }
      try {
        const result = await this.client.appendToStream(stream, fresh.map(toEventData), {
          expectedRevision: tail.revision === 'no_stream' ? NO_STREAM : tail.revision,
        });
        const p = result.position ?? { commit: -1n, prepare: -1n };
        return { nextExpectedRevision: result.nextExpectedRevision, position: { commit: p.commit, prepare: p.prepare } };
      } catch (err) {
        // Another writer moved the tail between the read and the append: read it again.
        if (err instanceof WrongExpectedVersionError && attempt < APPEND_ATTEMPTS) continue;
        if (err instanceof WrongExpectedVersionError) {
          const actual = err.actualVersion;
          throw new WrongExpectedRevisionError(stream, expected, typeof actual === 'bigint' ? actual : 'no_stream');
        }
        throw asWriteError(err);
      }
    }
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const direction = options.direction ?? 'forwards';
    const from = options.fromRevision ?? (direction === 'forwards' ? 'start' : 'end');
    if (options.maxCount === 0) return [];
    const out: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(stream, {
        direction: direction === 'forwards' ? FORWARDS : BACKWARDS,
        fromRevision: from === 'start' ? START : from === 'end' ? END : from,
        ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      await this.drain(read, (resolved) => {
        const e = toRecorded(resolved);
        if (e) out.push(e);
        return true;
      });
    } catch (err) {
      if (err instanceof StreamNotFoundError) return [];
      throw err;
    }
    return out;
  }

  /**
   * A page of `maxCount` events after `after`. The server's maxCount counts the system events we
   * leave out, so a short page is not the end: pages follow until enough events are kept or a
   * page comes back short of what was asked (the end of the log). A page stopped early is
   * cancelled. (The client's readAll takes no server-side filter, so type filters apply here.)
   */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const max = options.maxCount ?? 1000;
    const keeps = typeTestOf(options);
    const out: RecordedEvent[] = [];
    if (max <= 0) return out;
    const after = options.after;
    if (after && isMalformed(after)) throw new InvalidPositionError(after);
    // ESDB reads from a position inclusively; the port reads strictly after it.
    let from: LogPosition | undefined = after && !isStart(after) ? after : undefined;
    while (out.length < max) {
      const wanted = (from ? 1 : 0) + (keeps ? Math.max(PAGE, max - out.length) : max - out.length);
      let records = 0;
      let last: LogPosition | null = null;
      const page = from;
      try {
        const read = this.client.readAll({ fromPosition: page ?? START, direction: FORWARDS, maxCount: wanted });
        await this.drain(read, (resolved: AllStreamResolvedEvent) => {
          records++;
          last = positionOf(resolved) ?? last;
          const e = toRecorded(resolved);
          if (!e || (keeps && !keeps(e.type))) return true;
          if (page && comparePositions(e.position, page) <= 0) return true;
          out.push(e);
          return out.length < max;
        });
      } catch (err) {
        throw asPositionError(err, page);
      }
      if (out.length >= max || records < wanted || last === null) break;
      from = last;
    }
    return out;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): Subscription {
    const keeps = typeTestOf(options);
    const kept = typeFilterOf(options);
    const only = kept?.only ? kept.types : null;
    const fromEnd = options.after === 'end';
    const after = options.after && options.after !== 'end' && !isStart(options.after) ? options.after : undefined;
    const malformed = after !== undefined && isMalformed(after);
    // Kept types are filtered by the server, which then sends none of the others (nor system events).
    const filter = only ? eventTypeFilter({ regex: `^(?:${only.map(escapeRegex).join('|')})$` }) : excludeSystemEvents();
    // Subscriptions from a position start strictly after it, as the port does.
    const subscription = malformed ? null : this.client.subscribeToAll({ fromPosition: fromEnd ? END : (after ?? START), filter });
    let closed: Promise<void> | null = null;
    const subscriptions = this.subscriptions;
    const handle: Subscription = {
      close() {
        subscriptions.delete(handle);
        closed ??= subscription ? subscription.unsubscribe() : Promise.resolve();
        return closed;
      },
      async *[Symbol.asyncIterator]() {
        if (!subscription) throw new InvalidPositionError(after!);
        try {
          for await (const resolved of subscription) {
            const e = toRecorded(resolved);
            if (!e || (keeps && !keeps(e.type))) continue;
            if (after && comparePositions(e.position, after) <= 0) continue;
            yield e;
          }
        } catch (err) {
          throw asPositionError(err, after);
        } finally {
          // A consumer that stops early ends the gRPC call too.
          await handle.close();
        }
      },
    };
    this.subscriptions.add(handle);
    return handle;
  }

  /** Ends open subscriptions and reads, then the client; their open gRPC calls would hold dispose(). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.subscriptions].map((s) => s.close()));
      await Promise.allSettled([...this.reads].map((r) => r.cancel()));
      await this.client.dispose();
    })();
    return this.closing;
  }

  /** The stream's last revision and the ids of its last events (enough to hold a resend of `count`). */
  private async readTail(stream: string, count: number): Promise<Tail> {
    const tail = await this.readStream(stream, { direction: 'backwards', maxCount: Math.max(this.dedupeWindow, count) });
    const last = tail[0];
    if (!last) return { revision: 'no_stream', position: { commit: -1n, prepare: -1n }, ids: new Set() };
    return { revision: last.revision, position: last.position, ids: new Set(tail.map((e) => e.id)) };
  }

  /** Iterates a read; when `take` says stop, the read is cancelled so its gRPC call ends. */
  private async drain<E>(read: EsdbRead<E>, take: (item: E) => boolean): Promise<void> {
    this.reads.add(read);
    let ended = false;
    try {
      for await (const item of read) {
        if (!take(item)) return;
      }
      ended = true;
    } finally {
      this.reads.delete(read);
      if (!ended) await read.cancel().catch(() => undefined);
    }
  }
}

function holds(expected: ExpectedRevision, actual: bigint | 'no_stream'): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return actual === 'no_stream';
  if (expected === 'stream_exists') return actual !== 'no_stream';
  return actual === expected;
}

/** The events whose ids are neither in the stream's tail nor earlier in the same append. */
function withoutDuplicates(events: EventToAppend[], stored: ReadonlySet<string>): EventToAppend[] {
  const seen = new Set<string>();
  return events.filter((e) => {
    if (stored.has(e.id) || seen.has(e.id)) return false;
    seen.add(e.id);
    return true;
  });
}

function toEventData(e: EventToAppend) {
  return jsonEvent({ id: e.id, type: e.type, data: e.data as unknown as JSONType, metadata: (e.metadata ?? {}) as JSONType });
}

/** The client's error type (unavailable, deadline-exceeded, ...) as the code write-health.ts reports. */
function asWriteError(err: unknown): StoreWriteError {
  const type = (err as { type?: unknown }).type;
  const code = `ESDB_${typeof type === 'string' ? type.toUpperCase().replace(/-/g, '_') : 'ERROR'}`;
  return new StoreWriteError(code, (err as Error).message, { cause: err });
}

function isStart(p: LogPosition): boolean {
  return p.commit === -1n && p.prepare === -1n;
}

/** An event type as a regular expression matching it alone. */
function escapeRegex(type: string): string {
  return type.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
