/**
 * The write side of the SQLite event store: appends whole batches in one transaction.
 * It runs in a worker thread (sqlite-writer-worker.ts), so the commit and its fsync never
 * block the thread that reads device sockets; the messages it exchanges are plain data.
 */
import type Database from 'better-sqlite3';

/** One appendToStream call, as posted to the writer. */
export interface WireAppend {
  stream: string;
  /** 'any' | 'no_stream' | 'stream_exists', or an exact revision as a decimal string. */
  expected: string;
  events: Array<{ id: string; type: string; data: string; metadata: string }>;
  created: number;
}

export type WireOutcome =
  | { ok: true; revision: number; position: number }
  /** The expected revision did not hold; `current` is -1 for no stream. */
  | { ok: false; current: number };

export class LogWriter {
  /** Last revision of every stream written, so appends skip a lookup. */
  private readonly revisions = new Map<string, number>();
  private readonly insert: Database.Statement;
  private readonly lastRevision: Database.Statement;
  private readonly lastPositionOfStream: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.insert = db.prepare(
      'INSERT OR IGNORE INTO events (event_id, stream, revision, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.lastRevision = db.prepare('SELECT max(revision) FROM events WHERE stream = ?').pluck();
    this.lastPositionOfStream = db.prepare('SELECT position FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1').pluck();
  }

  /** All or nothing: throws when the transaction rolled back. */
  writeBatch(batch: WireAppend[]): WireOutcome[] {
    const touched = new Map<string, number>();
    const outcomes: WireOutcome[] = [];
    this.db.transaction(() => {
      for (const append of batch) outcomes.push(this.writeOne(append, touched));
    })();
    for (const [stream, revision] of touched) this.revisions.set(stream, revision);
    return outcomes;
  }

  private currentRevision(stream: string, touched: Map<string, number>): number {
    const known = touched.get(stream) ?? this.revisions.get(stream);
    if (known !== undefined) return known;
    return (this.lastRevision.get(stream) as number | null) ?? -1;
  }

  private writeOne(append: WireAppend, touched: Map<string, number>): WireOutcome {
    const { stream, expected } = append;
    const current = this.currentRevision(stream, touched);
    const holds =
      expected === 'any' ||
      (expected === 'no_stream' && current === -1) ||
      (expected === 'stream_exists' && current !== -1) ||
      expected === String(current);
    if (!holds) return { ok: false, current };
    let revision = current;
    let position = -1;
    for (const e of append.events) {
      // Idempotence: an id already in the log is ignored (the only constraint this insert can hit,
      // since the revision is computed here), and the revision is not consumed.
      const info = this.insert.run(e.id, stream, revision + 1, e.type, e.data, e.metadata, append.created);
      if (info.changes === 0) continue;
      revision += 1;
      position = Number(info.lastInsertRowid);
    }
    touched.set(stream, revision);
    if (position === -1) position = (this.lastPositionOfStream.get(stream) as number | undefined) ?? -1;
    return { ok: true, revision, position };
  }
}
