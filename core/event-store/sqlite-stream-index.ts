/**
 * Finding a stream's events in the SQLite log: `stream_index` holds (stream, revision) ->
 * position for the log up to `indexed_through`; later events (the tail) are found through
 * `events_tail`. The writer moves the tail into the index in bulk, sorted by stream, so a
 * thousand streams cost a few pages per stream per flush instead of a page per event.
 * Readers see committed events at once, indexed or not; they read inside one transaction
 * so the index and the tail they combine come from the same snapshot.
 */
import type Database from 'better-sqlite3';
import { boundLimit } from '../sqlite-limit.js';

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

const TAIL_POSITIONS = `SELECT position FROM events INDEXED BY events_tail WHERE position > ? AND stream_id = ?`;

export class StreamIndex {
  private readonly s: Record<
    | 'indexedThrough'
    | 'findStream'
    | 'indexForwards'
    | 'indexBackwards'
    | 'tailForwards'
    | 'tailBackwards'
    | 'indexLast'
    | 'tailLast'
    | 'lastPosition'
    | 'moveTail'
    | 'setIndexedThrough',
    Database.Statement
  >;

  constructor(private readonly db: Database.Database) {
    this.s = {
      indexedThrough: db.prepare("SELECT value FROM log_state WHERE name = 'indexed_through'").pluck(),
      findStream: db.prepare('SELECT id FROM streams WHERE name = ?').pluck(),
      indexForwards: db.prepare(
        `SELECT e.* FROM stream_index i JOIN events e ON e.position = i.position WHERE i.stream_id = ? AND i.revision >= ? ORDER BY i.revision ASC LIMIT ${boundLimit()}`,
      ),
      indexBackwards: db.prepare(
        `SELECT e.* FROM stream_index i JOIN events e ON e.position = i.position WHERE i.stream_id = ? AND i.revision <= ? ORDER BY i.revision DESC LIMIT ${boundLimit()}`,
      ),
      tailForwards: db.prepare(
        `SELECT * FROM events WHERE position IN (${TAIL_POSITIONS} AND revision >= ?) ORDER BY position ASC LIMIT ${boundLimit()}`,
      ),
      tailBackwards: db.prepare(
        `SELECT * FROM events WHERE position IN (${TAIL_POSITIONS} AND revision <= ?) ORDER BY position DESC LIMIT ${boundLimit()}`,
      ),
      indexLast: db.prepare('SELECT revision, position FROM stream_index WHERE stream_id = ? ORDER BY revision DESC LIMIT 1'),
      tailLast: db.prepare(
        'SELECT revision, position FROM events INDEXED BY events_tail WHERE position > ? AND stream_id = ? ORDER BY position DESC LIMIT 1',
      ),
      lastPosition: db.prepare('SELECT coalesce(max(position), 0) FROM events').pluck(),
      moveTail: db.prepare(
        'INSERT INTO stream_index (stream_id, revision, position) SELECT stream_id, revision, position FROM events INDEXED BY events_tail WHERE position > ? AND position <= ? ORDER BY stream_id, revision',
      ),
      setIndexedThrough: db.prepare("UPDATE log_state SET value = ? WHERE name = 'indexed_through'"),
    };
  }

  streamId(name: string): number | null {
    return (this.s.findStream.get(name) as number | undefined) ?? null;
  }

  indexedThrough(): number {
    return this.s.indexedThrough.get() as number;
  }

  lastPosition(): number {
    return this.s.lastPosition.get() as number;
  }

  /** A stream's events in revision order; [] for a stream that does not exist. */
  read(name: string, r: StreamRead): EventRow[] {
    return this.db.transaction(() => {
      const id = this.streamId(name);
      if (id === null || r.maxCount <= 0) return [];
      const through = this.indexedThrough();
      // Every tail event of a stream has a higher revision than its indexed ones.
      if (r.direction === 'forwards') {
        const rows = this.s.indexForwards.all(id, r.fromRevision, r.maxCount) as EventRow[];
        if (rows.length === r.maxCount) return rows;
        return rows.concat(this.s.tailForwards.all(through, id, r.fromRevision, r.maxCount - rows.length) as EventRow[]);
      }
      const rows = this.s.tailBackwards.all(through, id, r.fromRevision, r.maxCount) as EventRow[];
      if (rows.length === r.maxCount) return rows;
      return rows.concat(this.s.indexBackwards.all(id, r.fromRevision, r.maxCount - rows.length) as EventRow[]);
    })();
  }

  /** The stream's newest revision and its position, or null when it has no events. */
  last(streamId: number): { revision: number; position: number } | null {
    const tail = this.s.tailLast.get(this.indexedThrough(), streamId) as { revision: number; position: number } | undefined;
    return tail ?? (this.s.indexLast.get(streamId) as { revision: number; position: number } | undefined) ?? null;
  }

  /** Events after `indexed_through`. */
  tailLength(): number {
    return this.lastPosition() - this.indexedThrough();
  }

  /** Moves the tail's oldest `maxEvents` into the index, in one transaction; returns how many events moved. */
  flush(maxEvents: number): number {
    return this.db.transaction(() => {
      const from = this.indexedThrough();
      const to = Math.min(this.lastPosition(), from + maxEvents);
      if (to <= from) return 0;
      const moved = this.s.moveTail.run(from, to).changes;
      this.s.setIndexedThrough.run(to);
      return moved;
    }).immediate();
  }
}
