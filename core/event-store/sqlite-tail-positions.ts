/**
 * Where each stream's events in the log's tail are (the events after `indexed_through`,
 * which stream_index does not cover yet), kept in memory per connection. `events_tail`
 * is in position order, so finding one stream's tail events in SQL meant reading the whole
 * tail: up to tens of thousands of entries for every stream read, and a gateway reads a few
 * streams per login. The map instead takes in what was appended since its last use, so a
 * stream read costs its own events.
 */
import type Database from 'better-sqlite3';

/** A stream's tail events in revision order, as flat pairs: [revision, position, revision, position, ...]. */
export type TailPairs = readonly number[];

const NONE: TailPairs = [];

export class TailPositions {
  /** Stream id -> its tail events as flat [revision, position] pairs, ascending. */
  private byStream = new Map<number, number[]>();
  /** Pairs at or below it were indexed since they came in: dropped when their stream is read, or in a sweep. */
  private through = 0;
  /** The highest position taken in. */
  private seen = 0;
  private pairs = 0;
  private readonly scan: Database.Statement;

  constructor(db: Database.Database) {
    this.scan = db
      .prepare('SELECT position, stream_id, revision FROM events INDEXED BY events_tail WHERE position > ? ORDER BY position')
      .raw(true);
  }

  /**
   * Takes in the events appended since the last call; `through` is `indexed_through` as the
   * caller's transaction sees it. Call inside that read transaction, so both come from one snapshot.
   */
  sync(through: number): void {
    if (through > this.seen) this.restart(through);
    this.through = through;
    for (const [position, streamId, revision] of this.scan.iterate(this.seen) as Iterable<[number, number, number]>) {
      let pairs = this.byStream.get(streamId);
      if (!pairs) this.byStream.set(streamId, (pairs = []));
      pairs.push(revision, position);
      this.seen = position;
      this.pairs++;
    }
    // Streams that stopped appending keep indexed pairs until swept: at most about as many as the tail holds.
    if (this.pairs > 2 * (this.seen - this.through) + 1024) this.sweep();
  }

  /** The stream's tail events (after the last sync's `through`). */
  of(streamId: number): TailPairs {
    const pairs = this.byStream.get(streamId);
    if (!pairs) return NONE;
    let indexed = 0;
    while (indexed < pairs.length && pairs[indexed + 1]! <= this.through) indexed += 2;
    if (indexed > 0) {
      pairs.splice(0, indexed);
      this.pairs -= indexed / 2;
      if (pairs.length === 0) this.byStream.delete(streamId);
    }
    return pairs;
  }

  /**
   * Forgets everything: after a rolled-back transaction, whose own appends the writer's
   * connection saw, and whose positions the next transaction reuses.
   */
  reset(): void {
    this.restart(0);
  }

  private restart(from: number): void {
    this.byStream = new Map();
    this.seen = from;
    this.pairs = 0;
  }

  private sweep(): void {
    for (const id of [...this.byStream.keys()]) this.of(id);
  }
}
