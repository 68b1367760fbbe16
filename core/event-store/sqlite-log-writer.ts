/**
 * The write side of the SQLite event store: appends whole batches in one transaction.
 * It runs in a worker thread (sqlite-writer-worker.ts), so the commit and its fsync never
 * block the thread that reads device sockets; the messages it exchanges are plain data.
 */
import type Database from 'better-sqlite3';
import type { WireAppend, WireOutcome } from './sqlite-wire.js';

/** What one transaction learnt about streams; kept only once it committed. */
interface BatchState {
  revisions: Map<string, number>;
  streamIds: Map<string, number>;
}

export class LogWriter {
  /** Last revision of every stream written, so appends skip a lookup. */
  private readonly revisions = new Map<string, number>();
  /** Stream name -> id, for streams that exist in the log (ids never change). */
  private readonly streamIds = new Map<string, number>();
  private readonly insert: Database.Statement;
  private readonly findStream: Database.Statement;
  private readonly createStream: Database.Statement;
  private readonly lastRevision: Database.Statement;
  private readonly lastPositionOfStream: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.insert = db.prepare(
      'INSERT OR IGNORE INTO events (event_id, stream_id, revision, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.findStream = db.prepare('SELECT id FROM streams WHERE name = ?').pluck();
    this.createStream = db.prepare('INSERT INTO streams (name) VALUES (?)');
    this.lastRevision = db.prepare('SELECT max(revision) FROM events WHERE stream_id = ?').pluck();
    this.lastPositionOfStream = db
      .prepare('SELECT position FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1')
      .pluck();
  }

  /** All or nothing: throws when the transaction rolled back. */
  writeBatch(batch: WireAppend[]): WireOutcome[] {
    const state: BatchState = { revisions: new Map(), streamIds: new Map() };
    const outcomes: WireOutcome[] = [];
    this.db.transaction(() => {
      for (const append of batch) outcomes.push(this.writeOne(append, state));
    })();
    for (const [stream, revision] of state.revisions) this.revisions.set(stream, revision);
    for (const [stream, id] of state.streamIds) this.streamIds.set(stream, id);
    return outcomes;
  }

  /** The stream's id, or null when it has no events yet. */
  private streamId(stream: string, state: BatchState): number | null {
    const known = state.streamIds.get(stream) ?? this.streamIds.get(stream);
    if (known !== undefined) return known;
    const found = this.findStream.get(stream) as number | undefined;
    if (found !== undefined) this.streamIds.set(stream, found);
    return found ?? null;
  }

  private createStreamId(stream: string, state: BatchState): number {
    const id = Number(this.createStream.run(stream).lastInsertRowid);
    state.streamIds.set(stream, id);
    return id;
  }

  private currentRevision(stream: string, streamId: number | null, state: BatchState): number {
    const known = state.revisions.get(stream) ?? this.revisions.get(stream);
    if (known !== undefined) return known;
    if (streamId === null) return -1;
    return (this.lastRevision.get(streamId) as number | null) ?? -1;
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
    if (append.events.length === 0) return { ok: true, revision: current, position: this.lastPosition(streamId) };
    streamId ??= this.createStreamId(stream, state);
    let revision = current;
    let position = -1;
    for (const e of append.events) {
      // Idempotence: an id already in the log is ignored (the only constraint this insert can hit,
      // since the revision is computed here), and the revision is not consumed.
      const info = this.insert.run(e.id, streamId, revision + 1, e.type, e.data, e.metadata, append.created);
      if (info.changes === 0) continue;
      revision += 1;
      position = Number(info.lastInsertRowid);
    }
    state.revisions.set(stream, revision);
    if (position === -1) position = this.lastPosition(streamId);
    return { ok: true, revision, position };
  }

  private lastPosition(streamId: number | null): number {
    if (streamId === null) return -1;
    return (this.lastPositionOfStream.get(streamId) as number | undefined) ?? -1;
  }
}
