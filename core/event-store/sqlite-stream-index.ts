/**
 * Finding a stream's events in the SQLite log: `idx.stream_index` (a file of its own, see
 * sqlite-schema.ts) holds (stream, revision) -> position for the log up to `indexed_through`;
 * later events (the tail) are found through `events_tail`, which each connection follows
 * into a map in memory (TailPositions). The log's upkeep thread moves the tail into the index
 * in bulk, sorted by stream, so a thousand streams cost a few pages per stream per step
 * instead of a page per event. Readers see committed events at once, indexed or not; they
 * read inside one transaction. The index only ever holds committed events, so whichever of
 * the two files that transaction reads first, the index and the tail it combines cover each
 * event of the log's snapshot once; an entry past that snapshot finds no event to join.
 */
import type Database from 'better-sqlite3';
import { boundLimit } from '../sqlite-limit.js';
import { TailPositions, type TailPairs } from './sqlite-tail-positions.js';

export interface EventRow {
  position: number;
  event_id: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  created: number;
}

export interface StreamRead {
  direction: 'forwards' | 'backwards';
  /** Inclusive; forwards from it, or backwards down from it. */
  fromRevision: number;
  maxCount: number;
}

/** Past this many cached stream ids the cache starts over (they are looked up again on demand). */
const MAX_CACHED_STREAM_IDS = 200_000;

export class StreamIndex {
  private readonly s: Record<
    | 'indexedThrough'
    | 'findStream'
    | 'indexForwards'
    | 'indexBackwards'
    | 'indexLast'
    | 'byPosition'
    | 'lastPosition'
    | 'claimIndex'
    | 'moveTail'
    | 'setIndexedThrough',
    Database.Statement
  >;

  private readonly tail: TailPositions;
  /** Stream name -> id, for streams found committed (an id never changes once committed). */
  private readonly streamIds = new Map<string, number>();
  /** One read transaction, so the index and the tail it combines come from one snapshot. */
  private readonly readInSnapshot: (name: string, r: StreamRead) => EventRow[];

  constructor(private readonly db: Database.Database) {
    this.tail = new TailPositions(db);
    this.readInSnapshot = db.transaction((name: string, r: StreamRead) => this.readNow(name, r));
    this.s = {
      indexedThrough: db.prepare('SELECT indexed_through FROM idx.index_state').pluck(),
      findStream: db.prepare('SELECT id FROM streams WHERE name = ?').pluck(),
      indexForwards: db.prepare(
        `SELECT e.* FROM idx.stream_index i JOIN events e ON e.position = i.position WHERE i.stream_id = ? AND i.revision >= ? ORDER BY i.revision ASC LIMIT ${boundLimit()}`,
      ),
      indexBackwards: db.prepare(
        `SELECT e.* FROM idx.stream_index i JOIN events e ON e.position = i.position WHERE i.stream_id = ? AND i.revision <= ? ORDER BY i.revision DESC LIMIT ${boundLimit()}`,
      ),
      indexLast: db.prepare('SELECT revision, position FROM idx.stream_index WHERE stream_id = ? ORDER BY revision DESC LIMIT 1'),
      byPosition: db.prepare('SELECT * FROM events WHERE position = ?'),
      lastPosition: db.prepare('SELECT coalesce(max(position), 0) FROM events').pluck(),
      // The step's first statement: it takes the index's write lock (not the log's) and says where the index stands.
      claimIndex: db.prepare('UPDATE idx.index_state SET indexed_through = indexed_through RETURNING indexed_through').pluck(),
      moveTail: db.prepare(
        'INSERT INTO idx.stream_index (stream_id, revision, position) SELECT stream_id, revision, position FROM events INDEXED BY events_tail WHERE position > ? AND position <= ? ORDER BY stream_id, revision',
      ),
      setIndexedThrough: db.prepare('UPDATE idx.index_state SET indexed_through = @to, through_event = (SELECT event_id FROM events WHERE position = @to)'),
    };
  }

  streamId(name: string): number | null {
    const known = this.streamIds.get(name);
    if (known !== undefined) return known;
    const found = (this.s.findStream.get(name) as number | undefined) ?? null;
    if (found !== null) this.rememberStream(name, found);
    return found;
  }

  /** A stream the caller's committed transaction created. */
  rememberStream(name: string, id: number): void {
    if (this.streamIds.size >= MAX_CACHED_STREAM_IDS) this.streamIds.clear();
    this.streamIds.set(name, id);
  }

  indexedThrough(): number {
    return this.s.indexedThrough.get() as number;
  }

  lastPosition(): number {
    return this.s.lastPosition.get() as number;
  }

  /** A stream's events in revision order; [] for a stream that does not exist. */
  read(name: string, r: StreamRead): EventRow[] {
    return this.readInSnapshot(name, r);
  }

  private readNow(name: string, r: StreamRead): EventRow[] {
    const id = this.streamId(name);
    if (id === null || r.maxCount <= 0) return [];
    const tail = this.tailOf(id);
    // Every tail event of a stream has a higher revision than its indexed ones.
    if (r.direction === 'forwards') {
      const rows = this.s.indexForwards.all(id, r.fromRevision, r.maxCount) as EventRow[];
      if (rows.length === r.maxCount) return rows;
      return rows.concat(this.tailRows(tail, r.fromRevision, r.maxCount - rows.length, 'forwards'));
    }
    const rows = this.tailRows(tail, r.fromRevision, r.maxCount, 'backwards');
    if (rows.length === r.maxCount) return rows;
    return rows.concat(this.s.indexBackwards.all(id, r.fromRevision, r.maxCount - rows.length) as EventRow[]);
  }

  /** The stream's newest revision and its position, or null when it has no events. */
  last(streamId: number): { revision: number; position: number } | null {
    const tail = this.tailOf(streamId);
    if (tail.length > 0) return { revision: tail[tail.length - 2]!, position: tail[tail.length - 1]! };
    return (this.s.indexLast.get(streamId) as { revision: number; position: number } | undefined) ?? null;
  }

  /** What this connection saw inside the writer's transaction no longer holds: it rolled back. */
  forgetUncommitted(): void {
    this.tail.reset();
    this.streamIds.clear();
  }

  private tailOf(streamId: number): TailPairs {
    this.tail.sync(this.indexedThrough());
    return this.tail.of(streamId);
  }

  /** Up to `max` of the stream's tail events from `fromRevision` on (inclusive), in the walk's order. */
  private tailRows(pairs: TailPairs, fromRevision: number, max: number, direction: StreamRead['direction']): EventRow[] {
    const rows: EventRow[] = [];
    if (direction === 'forwards') {
      for (let i = 0; i < pairs.length && rows.length < max; i += 2) {
        if (pairs[i]! >= fromRevision) rows.push(this.s.byPosition.get(pairs[i + 1]) as EventRow);
      }
    } else {
      for (let i = pairs.length - 2; i >= 0 && rows.length < max; i -= 2) {
        if (pairs[i]! <= fromRevision) rows.push(this.s.byPosition.get(pairs[i + 1]) as EventRow);
      }
    }
    return rows;
  }

  /** Events after `indexed_through`. */
  tailLength(): number {
    return this.lastPosition() - this.indexedThrough();
  }

  /**
   * Moves the tail's oldest `maxEvents` into the index, in one transaction that holds the
   * index's write lock only; returns how many events moved.
   */
  flush(maxEvents: number): number {
    return this.db.transaction(() => {
      const from = this.s.claimIndex.get() as number;
      const to = Math.min(this.lastPosition(), from + maxEvents);
      if (to <= from) return 0;
      const moved = this.s.moveTail.run(from, to).changes;
      this.s.setIndexedThrough.run({ to });
      return moved;
    })();
  }
}
