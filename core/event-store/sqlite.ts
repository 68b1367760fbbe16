/**
 * Embedded event store on SQLite (better-sqlite3, WAL, synchronous=FULL).
 *
 * Group commit: appends issued in the same turn of the event loop (from many
 * device connections at once) are written in ONE transaction, so a thousand
 * devices cost one fsync rather than a thousand. Each caller's promise
 * resolves only after that transaction committed: that is what makes an ack
 * sent after `await appendToStream(...)` durable.
 */
import Database from 'better-sqlite3';
import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
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
  type Subscription,
  WrongExpectedRevisionError,
} from './port.js';

interface PendingAppend {
  stream: string;
  events: EventToAppend[];
  expected: ExpectedRevision;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

interface FollowState {
  cursor: number;
  stopped: boolean;
  wake: (() => void) | null;
  onCommit: () => void;
}

interface EventRow {
  position: number;
  event_id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  created: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL UNIQUE,
  stream   TEXT NOT NULL,
  revision INTEGER NOT NULL,
  type     TEXT NOT NULL,
  data     TEXT NOT NULL,
  metadata TEXT NOT NULL,
  created  INTEGER NOT NULL,
  UNIQUE (stream, revision)
);`;

/** How often a subscriber looks for events appended by another process on the same file. */
const POLL_MS = 200;

export interface SqliteStoreOptions {
  clock?: Clock;
  /** `FULL` (default) survives power loss; `NORMAL` only survives a process crash. */
  synchronous?: 'FULL' | 'NORMAL' | 'OFF';
}

export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly clock: Clock;
  private pending: PendingAppend[] = [];
  private flushScheduled = false;
  /** Last revision of every stream touched, so appends skip a lookup. */
  private readonly revisions = new Map<string, number>();
  private readonly committed = new EventEmitter();
  private closed = false;

  private readonly stmt: {
    insert: Database.Statement;
    lastRevision: Database.Statement;
    lastPositionOfStream: Database.Statement;
    readForwards: Database.Statement;
    readBackwards: Database.Statement;
    readAll: Database.Statement;
  };

  constructor(path: string, options: SqliteStoreOptions = {}) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    this.db.pragma('busy_timeout = 5000');
    // Telemetry appends touch one index page per device stream: keep those pages in memory,
    // and checkpoint the WAL in larger, rarer steps (each checkpoint is an fsync of the db file).
    this.db.pragma('cache_size = -65536');
    this.db.pragma('wal_autocheckpoint = 10000');
    this.db.exec(SCHEMA);
    this.clock = options.clock ?? systemClock;
    this.committed.setMaxListeners(0);
    this.stmt = {
      insert: this.db.prepare(
        'INSERT OR IGNORE INTO events (event_id, stream, revision, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      lastRevision: this.db.prepare('SELECT max(revision) FROM events WHERE stream = ?').pluck(),
      lastPositionOfStream: this.db
        .prepare('SELECT position FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1')
        .pluck(),
      readForwards: this.db.prepare(
        'SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision ASC LIMIT ?',
      ),
      readBackwards: this.db.prepare(
        'SELECT * FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?',
      ),
      readAll: this.db.prepare('SELECT * FROM events WHERE position > ? ORDER BY position ASC LIMIT ?'),
    };
  }

  appendToStream(
    stream: string,
    events: EventToAppend[],
    options: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('event store is closed'));
    return new Promise((resolve, reject) => {
      this.pending.push({ stream, events, expected: options.expectedRevision ?? 'any', resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Writes every pending append in one transaction, then settles their promises. */
  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const outcomes: Array<AppendResult | Error> = [];
    const touched = new Map<string, number>();
    try {
      this.db.transaction(() => {
        for (const append of batch) outcomes.push(this.writeOne(append, touched));
      })();
    } catch (err) {
      // The whole transaction rolled back: nothing of this batch is durable.
      for (const append of batch) append.reject(err);
      return;
    }
    for (const [stream, rev] of touched) this.revisions.set(stream, rev);
    batch.forEach((append, i) => {
      const outcome = outcomes[i]!;
      if (outcome instanceof Error) append.reject(outcome);
      else append.resolve(outcome);
    });
    this.committed.emit('commit');
  }

  private currentRevision(stream: string, touched: Map<string, number>): number {
    const known = touched.get(stream) ?? this.revisions.get(stream);
    if (known !== undefined) return known;
    const last = this.stmt.lastRevision.get(stream) as number | null;
    return last ?? -1;
  }

  private writeOne(append: PendingAppend, touched: Map<string, number>): AppendResult | Error {
    const { stream, events, expected } = append;
    const current = this.currentRevision(stream, touched);
    const mismatch =
      (expected === 'no_stream' && current !== -1) ||
      (expected === 'stream_exists' && current === -1) ||
      (typeof expected === 'bigint' && BigInt(current) !== expected);
    if (mismatch) {
      return new WrongExpectedRevisionError(stream, expected, current === -1 ? 'no_stream' : BigInt(current));
    }
    let revision = current;
    let lastPosition = -1;
    const created = this.clock.now();
    for (const e of events) {
      // Idempotence: an id already in the log is ignored (the only constraint this insert can hit,
      // since the revision is computed here), and the revision is not consumed.
      const info = this.stmt.insert.run(
        e.id,
        stream,
        revision + 1,
        e.type,
        JSON.stringify(e.data),
        e.metadata ? JSON.stringify(e.metadata) : '{}',
        created,
      );
      if (info.changes === 0) continue;
      revision += 1;
      lastPosition = Number(info.lastInsertRowid);
    }
    touched.set(stream, revision);
    if (lastPosition === -1) {
      lastPosition = (this.stmt.lastPositionOfStream.get(stream) as number | undefined) ?? -1;
    }
    const p = BigInt(lastPosition);
    return { nextExpectedRevision: BigInt(revision), position: { commit: p, prepare: p } };
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const direction = options.direction ?? 'forwards';
    const max = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    const from = options.fromRevision ?? (direction === 'forwards' ? 'start' : 'end');
    const rows =
      direction === 'forwards'
        ? (this.stmt.readForwards.all(stream, from === 'start' ? 0 : from === 'end' ? Number.MAX_SAFE_INTEGER : Number(from), max) as EventRow[])
        : (this.stmt.readBackwards.all(stream, from === 'end' ? Number.MAX_SAFE_INTEGER : from === 'start' ? 0 : Number(from), max) as EventRow[]);
    return rows.map(toRecorded);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.readAllSync(options.after ? Number(options.after.commit) : 0, options.maxCount ?? 1000);
  }

  private readAllSync(afterPosition: number, maxCount: number): RecordedEvent[] {
    return (this.stmt.readAll.all(afterPosition, maxCount) as EventRow[]).map(toRecorded);
  }

  subscribeToAll(options: { after?: LogPosition } = {}): Subscription {
    const state: FollowState = {
      cursor: options.after ? Number(options.after.commit) : 0,
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
        const batch = this.readAllSync(state.cursor, 1000);
        if (batch.length > 0) {
          for (const e of batch) {
            if (state.stopped) return;
            state.cursor = Number(e.position.commit);
            yield e;
          }
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

  /** Waits for pending appends, then closes the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.committed.emit('commit');
    this.db.close();
  }
}

function toRecorded(row: EventRow): RecordedEvent {
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
