/**
 * Embedded event store on SQLite (better-sqlite3, WAL, synchronous=FULL).
 *
 * Writes run in a worker thread that owns the write connection: the commit and its
 * fsync never block the thread that serves sockets and HTTP. It starts at the store's
 * first append, so a thread that only reads the log costs no thread of its own. Appends
 * made in one turn of the event loop are posted together at its end, or as soon as
 * POST_EVERY_APPENDS of them are waiting; the writer commits everything that
 * reached it while it was busy as ONE transaction (group commit), so a thousand devices
 * cost one fsync rather than a thousand, and the next transaction starts as soon as the
 * previous one is done, without a round trip through this thread. Each caller's promise
 * resolves only after its transaction committed: that is what makes an ack sent after
 * `await appendToStream(...)` durable. Reads use this thread's own connection (WAL
 * readers see every committed batch). Stores of the same file in other threads of the
 * process (the gateway's thread beside the projections) hear of each commit at once
 * through a BroadcastChannel; other processes are found by polling.
 */
import type Database from 'better-sqlite3';
import { EventEmitter } from 'node:events';
import { BroadcastChannel, Worker } from 'node:worker_threads';
import { resolve as resolvePath } from 'node:path';
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { DomainEvent } from '../events.js';
import {
  type AppendResult,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeToAllOptions,
  type Subscription,
  type TypeFilter,
  WrongExpectedRevisionError,
  typeFilterOf,
} from './port.js';
import { BatchText, outcomeAt } from './sqlite-wire.js';
import { openLog, type SqliteLogOptions } from './sqlite-schema.js';
import { type EventRow, StreamIndex } from './sqlite-stream-index.js';
import type { WriterReply, WriterRequest, WriterSettings } from './sqlite-writer-worker.js';
import { boundLimit } from '../sqlite-limit.js';
import { StoreWriteError } from './write-health.js';

/** An append the writer has not answered yet; its events travel apart (`pendingText`), so once posted they can be collected. */
interface PendingAppend {
  stream: string;
  expected: ExpectedRevision;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

interface FollowState {
  cursor: number;
  filter: TypeFilter;
  stopped: boolean;
  wake: (() => void) | null;
  onCommit: () => void;
}

/**
 * Events a subscriber reads per turn of the event loop: small enough that a subscriber
 * with a backlog (a projection catching up) leaves sockets, timers and HTTP on its thread
 * a turn every few milliseconds.
 */
const FOLLOW_BATCH = 1000;

/**
 * Appends waiting in this thread are posted to the writer once there are this many, without
 * waiting for the end of the turn: a busy gateway reads hundreds of frames in one turn, and the
 * writer, idle until then, now commits the first of them meanwhile (docs/performance.md).
 */
const POST_EVERY_APPENDS = 32;

/** How often a subscriber looks for events appended by another process on the same file. */
const POLL_MS = 200;
/**
 * Commits are told to the other threads at most once per this many ms: a busy gateway
 * commits every millisecond or two, and each post wakes every follower thread for a read
 * and a read-model commit of a few events. Spaced, the followers read and commit in
 * batches (a fleet of many units each sending now and then is mostly such small commits),
 * and the read models and webhook queue trail the log by a few tens of ms at most.
 */
const NEARBY_NOTICE_SPACING_MS = 40;

/**
 * The writer's entry point. Compiled, it sits next to this module; when this module runs
 * from TypeScript sources (vitest), the worker still runs the compiled file (`npm test`
 * builds first), because a worker thread cannot load TypeScript.
 */
const WRITER_ENTRY = import.meta.url.endsWith('.ts')
  ? new URL('../../dist/core/event-store/sqlite-writer-worker.js', import.meta.url)
  : new URL('./sqlite-writer-worker.js', import.meta.url);

export interface SqliteStoreOptions extends SqliteLogOptions {
  /** How often a short tail of the log is moved into the stream index (sqlite-log-upkeep.ts); 1 s by default. */
  indexIntervalMs?: number;
  clock?: Clock;
}

export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly clock: Clock;
  /** Started by the first append: a thread that only reads the log (the history's, the webhooks') never needs one. */
  private writer: Worker | null = null;
  private readonly writerSettings: WriterSettings;
  /** Appends made in this turn of the event loop, posted to the writer at its end (or every POST_EVERY_APPENDS). */
  private pending: PendingAppend[] = [];
  /** Their events, as the text posted to the writer. */
  private readonly pendingText = new BatchText();
  private postScheduled = false;
  /** Posted to the writer and not yet committed, in the order the writer commits them. */
  private inFlight: PendingAppend[] = [];
  /** Callers of probeWrite waiting for the probe posted to the writer (one probe answers them all). */
  private probes: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  private writerFailure: Error | null = null;
  private readonly committed = new EventEmitter();
  /** Commits of this file's stores in the other threads of this process (a channel never hears its own posts). */
  private readonly commitsNearby: BroadcastChannel;
  private lastNearbyNotice = 0;
  private nearbyNoticeTimer: NodeJS.Timeout | null = null;
  private closed = false;

  private readonly streamIndex: StreamIndex;
  private readonly readAllStatement: Database.Statement;
  private readonly streamNameStatement: Database.Statement;
  private readonly logEndStatement: Database.Statement;
  /** Reads that keep or skip event types, by that and the number of types named. */
  private readonly filteredStatements = new Map<string, Database.Statement>();
  /** Stream id -> name, for the streams `readAll` met (ids never change once committed). */
  private readonly streamNames = new Map<number, string>();

  constructor(path: string, options: SqliteStoreOptions = {}) {
    if (path === ':memory:') throw new Error('the SQLite event store needs a file: its writer thread opens its own connection');
    // Creates the file and table before the writer opens it.
    this.db = openLog(path, options);
    // This connection only reads (the writer thread has the large cache appends need): following the
    // log reads each page once, and every thread that opens the store has a connection like it.
    this.db.pragma('cache_size = -8192');
    this.clock = options.clock ?? systemClock;
    this.committed.setMaxListeners(0);
    this.streamIndex = new StreamIndex(this.db);
    // Rows as arrays (no object per row) and no join: a stream's name is looked up once (streamName).
    this.readAllStatement = this.db
      .prepare(
        `SELECT position, event_id, stream_id, revision, type, data, metadata, created FROM events
         WHERE position > ? ORDER BY position ASC LIMIT ${boundLimit()}`,
      )
      .raw(true);
    this.streamNameStatement = this.db.prepare('SELECT name FROM streams WHERE id = ?').pluck();
    this.logEndStatement = this.db.prepare('SELECT coalesce(max(position), 0) FROM events').pluck();
    this.writerSettings = {
      path,
      synchronous: options.synchronous ?? 'FULL',
      indexIntervalMs: options.indexIntervalMs ?? 1_000,
    };
    this.commitsNearby = new BroadcastChannel(`fleet-sqlite-log:${resolvePath(path)}`);
    this.commitsNearby.unref();
    this.commitsNearby.onmessage = () => this.committed.emit('commit');
  }

  /** The writer thread, started at the first post; messages posted while it starts wait for it. */
  private startedWriter(): Worker {
    if (this.writer) return this.writer;
    const writer = new Worker(WRITER_ENTRY, { workerData: this.writerSettings });
    writer.unref(); // referenced only while a batch is being written
    writer.on('message', (reply: WriterReply) => this.settle(reply));
    writer.on('error', (err) => this.fail(new StoreWriteError('WRITER_FAILED', `event store writer failed: ${err.message}`, { cause: err })));
    writer.on('exit', (code) => {
      if (!this.closed) this.fail(new StoreWriteError('WRITER_EXITED', `event store writer exited with code ${code}`));
      else this.settleProbes(new Error('event store is closed'));
    });
    return (this.writer = writer);
  }

  appendToStream(
    stream: string,
    events: EventToAppend[],
    options: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('event store is closed'));
    if (this.writerFailure) return Promise.reject(this.writerFailure);
    const expected = options.expectedRevision ?? 'any';
    try {
      this.pendingText.add(stream, typeof expected === 'bigint' ? expected.toString() : expected, this.clock.now(), events);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ stream, expected, resolve, reject });
      if (this.pending.length >= POST_EVERY_APPENDS) this.post();
      else if (!this.postScheduled) {
        this.postScheduled = true;
        setImmediate(() => {
          this.postScheduled = false;
          this.post();
        });
      }
    });
  }

  /**
   * A small committed write through the writer (sqlite-writer-worker.ts `probe`), so a store
   * that failed to write learns when it can again without an append (write-health.ts).
   */
  probeWrite(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('event store is closed'));
    if (this.writerFailure) return Promise.reject(this.writerFailure);
    return new Promise((resolve, reject) => {
      this.probes.push({ resolve, reject });
      if (this.probes.length > 1) return;
      const writer = this.startedWriter();
      writer.ref();
      const request: WriterRequest = { probe: true };
      writer.postMessage(request);
    });
  }

  private settleProbes(err: Error | null): void {
    const probes = this.probes;
    this.probes = [];
    for (const p of probes) {
      if (err) p.reject(err);
      else p.resolve();
    }
    if (this.inFlight.length === 0) this.writer?.unref();
  }

  /** Posts the appends waiting in this thread; the writer adds them to the transaction it starts next. */
  private post(): void {
    if (this.pending.length === 0 || this.writerFailure) return;
    const writer = this.startedWriter();
    if (this.inFlight.length === 0) writer.ref(); // keeps the process alive until they commit
    // Only the callbacks wait for the commit: the events' JSON is garbage from here, while still young.
    const request: WriterRequest = { batch: this.pendingText.take() };
    for (const append of this.pending) this.inFlight.push(append);
    this.pending = [];
    writer.postMessage(request);
  }

  /** One transaction ended: it held the oldest `count` appends in flight. */
  private settle(reply: WriterReply): void {
    if ('probe' in reply) {
      return this.settleProbes(reply.code === null ? null : new StoreWriteError(reply.code, `event store write probe failed: ${reply.error}`));
    }
    const batch = this.inFlight.splice(0, reply.count);
    if ('error' in reply) {
      // The whole transaction rolled back: nothing of this batch is durable.
      const err = new StoreWriteError(reply.code, `event store write failed: ${reply.error}`);
      for (const append of batch) append.reject(err);
    } else {
      batch.forEach((append, i) => {
        const outcome = outcomeAt(reply.outcomes, i);
        if (outcome.ok) {
          const p = BigInt(outcome.position);
          append.resolve({ nextExpectedRevision: BigInt(outcome.revision), position: { commit: p, prepare: p } });
        } else {
          const actual = outcome.current === -1 ? 'no_stream' : BigInt(outcome.current);
          append.reject(new WrongExpectedRevisionError(append.stream, append.expected, actual));
        }
      });
      this.committed.emit('commit');
      this.noticeNearby();
    }
    if (this.inFlight.length === 0 && this.probes.length === 0) this.writer?.unref();
    this.committed.emit('settled');
  }

  /** Tells the other threads of a commit now, or at the end of the current spacing window (one notice covers every commit before it). */
  private noticeNearby(): void {
    if (this.nearbyNoticeTimer) return;
    const wait = this.lastNearbyNotice + NEARBY_NOTICE_SPACING_MS - performance.now();
    if (wait <= 0) return this.postNearbyNotice();
    this.nearbyNoticeTimer = setTimeout(() => this.postNearbyNotice(), wait);
  }

  private postNearbyNotice(): void {
    this.nearbyNoticeTimer = null;
    this.lastNearbyNotice = performance.now();
    this.commitsNearby.postMessage(null);
  }

  /** The writer is gone: nothing in flight or pending can be made durable any more. */
  private fail(err: Error): void {
    this.writerFailure = err;
    for (const append of [...this.inFlight, ...this.pending]) append.reject(err);
    this.inFlight = [];
    this.pending = [];
    this.pendingText.clear();
    this.settleProbes(err);
    this.committed.emit('settled');
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const direction = options.direction ?? 'forwards';
    const max = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    const from = options.fromRevision ?? (direction === 'forwards' ? 'start' : 'end');
    const fromRevision =
      from === 'start' ? 0 : from === 'end' ? Number.MAX_SAFE_INTEGER : Number(from);
    const rows = this.streamIndex.read(stream, { direction, fromRevision, maxCount: max });
    return rows.map((row) => toRecorded({ ...row, stream }));
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.readAfter(options.after ? Number(options.after.commit) : 0, options.maxCount ?? 1000, typeFilterOf(options)).events;
  }

  /**
   * Up to `maxCount` events after `afterPosition`, and the position read through: the last
   * event's, or with a type filter the log's end as this read saw it when fewer than `maxCount`
   * events were left, so a follower moves past events it left out.
   */
  private readAfter(afterPosition: number, maxCount: number, filter: TypeFilter): { events: RecordedEvent[]; through: number } {
    // The end first, then the events up to it: an append committed between the two is read next time.
    const end = filter ? (this.logEndStatement.get() as number) : 0;
    const rows = (
      filter ? this.filteredStatement(filter).all(afterPosition, end, ...filter.types, maxCount) : this.readAllStatement.all(afterPosition, maxCount)
    ) as RawEventRow[];
    let through = rows.length > 0 ? rows[rows.length - 1]![0] : afterPosition;
    // With a type filter, a read short of maxCount went through the end it saw.
    if (filter && rows.length < maxCount) through = Math.max(end, afterPosition);
    return { events: this.toEvents(rows), through };
  }

  /** The read of events after a position up to another, keeping or leaving out the filter's types (their names bound). */
  private filteredStatement(filter: NonNullable<TypeFilter>): Database.Statement {
    const key = `${filter.only ? 'IN' : 'NOT IN'}:${filter.types.length}`;
    let statement = this.filteredStatements.get(key);
    if (!statement) {
      statement = this.db
        .prepare(
          `SELECT position, event_id, stream_id, revision, type, data, metadata, created FROM events
           WHERE position > ? AND position <= ? AND type ${filter.only ? 'IN' : 'NOT IN'} (${Array<string>(filter.types.length).fill('?').join(', ')})
           ORDER BY position ASC LIMIT ${boundLimit()}`,
        )
        .raw(true);
      this.filteredStatements.set(key, statement);
    }
    return statement;
  }

  private toEvents(rows: RawEventRow[]): RecordedEvent[] {
    const events = new Array<RecordedEvent>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      const p = BigInt(r[0]);
      events[i] = {
        id: r[1],
        stream: this.streamName(r[2]),
        revision: BigInt(r[3]),
        position: { commit: p, prepare: p },
        type: r[4],
        data: JSON.parse(r[5]) as unknown,
        metadata: parseMetadata(r[6]),
        created: r[7],
      } as RecordedEvent<DomainEvent>;
    }
    return events;
  }

  private streamName(id: number): string {
    let name = this.streamNames.get(id);
    if (name === undefined) {
      name = this.streamNameStatement.get(id) as string;
      this.streamNames.set(id, name);
    }
    return name;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): Subscription {
    const state: FollowState = {
      cursor: options.after === 'end' ? (this.logEndStatement.get() as number) : options.after ? Number(options.after.commit) : 0,
      filter: typeFilterOf(options),
      stopped: false,
      wake: null,
      onCommit: () => state.wake?.(),
    };
    this.committed.on('commit', state.onCommit);
    return {
      close: async () => this.unfollow(state),
      [Symbol.asyncIterator]: () => this.follow(state),
    };
  }

  private unfollow(state: FollowState): void {
    state.stopped = true;
    this.committed.off('commit', state.onCommit);
    state.wake?.();
  }

  /** Reads the log from the cursor, then sleeps until the next commit (or a poll, for other writers). */
  private async *follow(state: FollowState): AsyncGenerator<RecordedEvent> {
    try {
      while (!state.stopped && !this.closed) {
        const { events: batch, through } = this.readAfter(state.cursor, FOLLOW_BATCH, state.filter);
        // Past what was read, skipped events included: a subscriber that stops midway reads no more.
        state.cursor = through;
        if (batch.length > 0) {
          for (const e of batch) {
            if (state.stopped) return;
            yield e;
          }
          // A subscriber with a backlog would otherwise read the next batch within the same run of
          // microtasks, and sockets, timers and HTTP on this thread would wait until it caught up.
          await new Promise<void>((resolve) => setImmediate(resolve));
          continue;
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          state.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        state.wake = null;
      }
    } finally {
      this.unfollow(state);
    }
  }

  /** Waits for pending appends, then closes the writer and the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    while ((this.inFlight.length > 0 || this.pending.length > 0) && !this.writerFailure) {
      await new Promise<void>((resolve) => this.committed.once('settled', resolve));
    }
    this.closed = true;
    if (this.nearbyNoticeTimer) {
      clearTimeout(this.nearbyNoticeTimer);
      this.postNearbyNotice();
    }
    this.commitsNearby.close();
    this.committed.emit('commit');
    const writer = this.writer;
    if (writer && !this.writerFailure) {
      const exited = new Promise((resolve) => writer.once('exit', resolve));
      const request: WriterRequest = { close: true };
      writer.ref();
      writer.postMessage(request);
      await exited;
    }
    this.db.close();
  }
}

/** position, event_id, stream_id, revision, type, data, metadata, created */
type RawEventRow = [number, string, number, number, string, string, string, number];

/** Most events carry no metadata: '{}' needs no parser. */
function parseMetadata(text: string): Record<string, unknown> {
  return text === '{}' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

function toRecorded(row: EventRow & { stream: string }): RecordedEvent {
  const p = BigInt(row.position);
  return {
    id: row.event_id,
    stream: row.stream,
    revision: BigInt(row.revision),
    position: { commit: p, prepare: p },
    type: row.type,
    data: JSON.parse(row.data) as unknown,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    created: row.created,
  } as RecordedEvent<DomainEvent>;
}
