/**
 * Where each customer's stream messages sit in the log: one row per position
 * fix, per device event and per published command event, keyed by (customer, log position), pointing at the
 * event by its stream and revision. GET /v1/stream resumes from it, so a
 * replay reads only its own customer's events and never scans the whole log.
 */
import type Database from 'better-sqlite3';
import { publishedCommandKind } from '../../core/command-view.js';
import type { Projection } from '../projection.js';

/** What a row points at: a fix (`event: position`), a device event (`event: event`) or a published command event (`event: command`). */
export const FEED_POSITION = 0;
export const FEED_EVENT = 1;
export const FEED_COMMAND = 2;

export const streamFeedProjection: Projection = {
  name: 'stream-feed',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS stream_feed (
        customer_id TEXT NOT NULL, commit_pos INTEGER NOT NULL, prepare_pos INTEGER NOT NULL,
        kind INTEGER NOT NULL, stream TEXT NOT NULL, revision INTEGER NOT NULL,
        PRIMARY KEY (customer_id, commit_pos, prepare_pos)) WITHOUT ROWID;`);
  },
  prepare(db: Database.Database) {
    const insert = db.prepare(
      'INSERT OR IGNORE INTO stream_feed (customer_id, commit_pos, prepare_pos, kind, stream, revision) VALUES (?, ?, ?, ?, ?, ?)',
    );
    return (e) => {
      const kind = e.type === 'PositionRecorded' ? FEED_POSITION : e.type === 'DeviceEventRaised' ? FEED_EVENT : publishedCommandKind(e.type) ? FEED_COMMAND : null;
      if (kind === null) return;
      insert.run((e.data as { customer_id: string }).customer_id, e.position.commit, e.position.prepare, kind, e.stream, e.revision);
    };
  },
};
