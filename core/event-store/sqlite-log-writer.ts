/**
 * The write side of the SQLite event store: appends whole batches in one transaction.
 * It runs in a worker thread (sqlite-writer-worker.ts), so the commit and its fsync never
 * block the thread that reads device sockets; the messages it exchanges are plain data.
 */
import type Database from 'better-sqlite3';
import { StreamIndex } from './sqlite-stream-index.js';
import type { WireAppend, WireOutcome } from './sqlite-wire.js';

/** What one transaction learnt about streams; kept only once it committed. */
interface BatchState {
  revisions: Map<string, number>;
  streamIds: Map<string, number>;
  lastPosition: number;
}

export class LogWriter {
  /** Last revision of every stream written, so appends skip a lookup. */
  private revisions = new Map<string, number>();
  /** The log's end as this writer left it: anything beyond was appended by another process. */
  private lastPosition: number;
  readonly index: StreamIndex;
  private readonly insert: Database.Statement;
  private readonly createStream: Database.Statement;

  /**
   * The transaction's first statement: it takes the log's write lock (BEGIN IMMEDIATE would take
   * the stream index's too) and nothing else. A DELETE that matches nothing compiles to the lock
   * and a halt; the UPDATE it replaced (`SET id = id`) also opened a temporary b-tree on every
   * run, whose fresh page cache was malloc'd and touched each time, a cost that shows where
   * commits are small and many (docs/performance.md).
   */
  private readonly claimLog: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.index = new StreamIndex(db);
    this.claimLog = db.prepare('DELETE FROM streams WHERE 0');
    this.insert = db.prepare(
      'INSERT OR IGNORE INTO events (event_id, stream_id, revision, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.createStream = db.prepare('INSERT INTO streams (name) VALUES (?)');
    this.lastPosition = this.index.lastPosition();
  }

  /** All or nothing: throws when the transaction rolled back. */
  writeBatch(batch: WireAppend[]): WireOutcome[] {
    const outcomes: WireOutcome[] = [];
    const state: BatchState = { revisions: new Map(), streamIds: new Map(), lastPosition: this.lastPosition };
    try {
      this.db.transaction(() => {
        this.claimLog.run();
        // Under the write lock: if another process appended, cached revisions may be stale.
        const end = this.index.lastPosition();
        if (end !== this.lastPosition) {
          this.revisions = new Map();
          state.lastPosition = end;
        }
        for (const append of batch) outcomes.push(this.writeOne(append, state));
      })();
    } catch (err) {
      this.index.forgetUncommitted();
      throw err;
    }
    for (const [stream, revision] of state.revisions) this.revisions.set(stream, revision);
    for (const [stream, id] of state.streamIds) this.index.rememberStream(stream, id);
    this.lastPosition = state.lastPosition;
    return outcomes;
  }

  /** The stream's id, or null when it has no events yet. */
  private streamId(stream: string, state: BatchState): number | null {
    return state.streamIds.get(stream) ?? this.index.streamId(stream);
  }

  private currentRevision(stream: string, streamId: number | null, state: BatchState): number {
    const known = state.revisions.get(stream) ?? this.revisions.get(stream);
    if (known !== undefined) return known;
    return streamId === null ? -1 : (this.index.last(streamId)?.revision ?? -1);
  }

  private writeOne(append: WireAppend, state: BatchState): WireOutcome {
    const { stream, expected } = append;
    let streamId = this.streamId(stream, state);
    const current = this.currentRevision(stream, streamId, state);
    const holds =
      expected === 'any' ||
      (expected === 'no_stream' && current === -1) ||
      (expected === 'stream_exists' && current !== -1) ||
      expected === String(current);
    if (!holds) return { ok: false, current };
    if (streamId === null) {
      if (append.events.length === 0) return { ok: true, revision: -1, position: -1 };
      streamId = Number(this.createStream.run(stream).lastInsertRowid);
      state.streamIds.set(stream, streamId);
    }
    let revision = current;
    let position = -1;
    for (const e of append.events) {
      // Idempotence: an id already in the log is ignored (the only constraint this insert
      // can hit), and the revision is not consumed.
      const info = this.insert.run(e.id, streamId, revision + 1, e.type, e.data, e.metadata, append.created);
      if (info.changes === 0) continue;
      revision += 1;
      position = Number(info.lastInsertRowid);
      state.lastPosition = position;
    }
    state.revisions.set(stream, revision);
    if (position === -1) position = this.index.last(streamId)?.position ?? -1;
    return { ok: true, revision, position };
  }
}
