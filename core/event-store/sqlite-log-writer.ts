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

/** Tail length at which the stream index is brought up to date right after a commit. */
export const INDEX_FLUSH_EVENTS = 20_000;
/** Events moved into the index per transaction: a step of a few ms on a fresh log, so acks queued behind it barely wait. */
export const INDEX_FLUSH_STEP = 4_000;
/**
 * How long a step that drains a tail shorter than INDEX_FLUSH_EVENTS (the writer's timer)
 * should hold the commits queued behind it. A step rewrites the index's last leaf page of
 * every stream it holds, and a log that has run a while gives each device's stream a leaf of
 * its own: on an index aged as 15,000 devices' first half hour (npm run bench --
 * stream-index), a step of 4,000 took 25-35 ms, against 1.5-2 ms on a fresh log. A fleet
 * sending rarely puts about one frame per stream in a step whatever its size, so a smaller
 * step costs about the same per event there. The drain halves its step while steps take
 * longer than this, down to INDEX_DRAIN_MIN_STEP, and doubles it back up to INDEX_FLUSH_STEP
 * while they take less than half. Steps after commits (a tail of INDEX_FLUSH_EVENTS or more:
 * a busy fleet, several frames per stream in a step) keep INDEX_FLUSH_STEP.
 */
export const INDEX_DRAIN_TARGET_MS = 5;
export const INDEX_DRAIN_MIN_STEP = 250;
/** `PRAGMA synchronous` NORMAL: in WAL mode, commits at this level or below are not fsynced. */
const SYNC_NORMAL = 1;

export class LogWriter {
  /** Last revision of every stream written, so appends skip a lookup. */
  private revisions = new Map<string, number>();
  /** The log's end as this writer left it: anything beyond was appended by another process. */
  private lastPosition: number;
  readonly index: StreamIndex;
  private readonly insert: Database.Statement;
  private readonly createStream: Database.Statement;

  /** Events the next drain step moves (see INDEX_DRAIN_TARGET_MS). */
  private drainStep = INDEX_FLUSH_STEP;
  /** The connection's `synchronous` level as opened: what every append commits with. */
  private readonly appendSync: number;

  /** `now`: a clock in ms, for timing drain steps. */
  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.appendSync = db.pragma('synchronous', { simple: true }) as number;
    this.index = new StreamIndex(db);
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
        // Under the write lock: if another process appended, cached revisions may be stale.
        const end = this.index.lastPosition();
        if (end !== this.lastPosition) {
          this.revisions = new Map();
          state.lastPosition = end;
        }
        for (const append of batch) outcomes.push(this.writeOne(append, state));
      }).immediate();
    } catch (err) {
      this.index.forgetUncommitted();
      throw err;
    }
    for (const [stream, revision] of state.revisions) this.revisions.set(stream, revision);
    for (const [stream, id] of state.streamIds) this.index.rememberStream(stream, id);
    this.lastPosition = state.lastPosition;
    return outcomes;
  }

  /**
   * When the tail has grown to INDEX_FLUSH_EVENTS, moves its oldest INDEX_FLUSH_STEP into the
   * stream index; returns events moved. A step at a time: the next commit waits for it.
   */
  flushIndexIfDue(): number {
    return this.index.tailLength() >= INDEX_FLUSH_EVENTS ? this.indexStep(INDEX_FLUSH_STEP) : 0;
  }

  /**
   * Moves the oldest events of any tail into the index, one step sized to take about
   * INDEX_DRAIN_TARGET_MS; true when the step came out full, so more may be waiting.
   */
  drainIndexStep(): boolean {
    if (this.index.tailLength() === 0) return false;
    const size = this.drainStep;
    const started = this.now();
    const moved = this.indexStep(size);
    const took = this.now() - started;
    if (took > INDEX_DRAIN_TARGET_MS) this.drainStep = Math.max(INDEX_DRAIN_MIN_STEP, size / 2);
    else if (took < INDEX_DRAIN_TARGET_MS / 2 && moved === size) this.drainStep = Math.min(INDEX_FLUSH_STEP, size * 2);
    return moved === size;
  }

  /**
   * One step of `events` into the index, committed without an fsync of its own: the index
   * is derived from the log, so a step lost to a power cut leaves its events in the tail,
   * where readers find them and the next step moves them again; the next append's fsync
   * makes the step's WAL frames durable with its own. The drain also times its steps by
   * their work alone then, not by the disk's flush.
   */
  private indexStep(events: number): number {
    if (this.appendSync <= SYNC_NORMAL) return this.index.flush(events);
    this.db.pragma(`synchronous = ${SYNC_NORMAL}`);
    try {
      return this.index.flush(events);
    } finally {
      this.db.pragma(`synchronous = ${this.appendSync}`);
    }
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
