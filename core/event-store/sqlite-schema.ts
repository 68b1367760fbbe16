/** The SQLite event log's tables and connection settings, shared by the reader and the writer thread. */
import Database from 'better-sqlite3';
import { openPrivateSqlite } from '../private-files.js';

/**
 * `events` is the log, in commit order; it alone is the truth. Finding a stream's events
 * goes through `stream_index`, which is maintained in bulk (see sqlite-stream-index.ts),
 * the way EventStoreDB indexes its log: a per-event (stream, revision) b-tree costs one
 * dirty page per stream per commit, and with a thousand devices appending together that
 * was most of what every commit wrote. Events after `indexed_through` are the tail, found
 * by `events_tail`, a narrow index in position order that only ever grows at its end
 * (each connection reads it into a map by stream as it goes: sqlite-tail-positions.ts).
 * Stream names are stored once, in `streams`.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS streams (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS events (
  position  INTEGER PRIMARY KEY,
  event_id  TEXT NOT NULL UNIQUE,
  stream_id INTEGER NOT NULL,
  revision  INTEGER NOT NULL,
  type      TEXT NOT NULL,
  data      TEXT NOT NULL,
  metadata  TEXT NOT NULL,
  created   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS events_tail ON events (position, stream_id, revision);
CREATE TABLE IF NOT EXISTS stream_index (
  stream_id INTEGER NOT NULL,
  revision  INTEGER NOT NULL,
  position  INTEGER NOT NULL,
  PRIMARY KEY (stream_id, revision)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_state (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
INSERT OR IGNORE INTO log_state (name, value) VALUES ('indexed_through', 0);`;

/**
 * Earlier layouts kept (stream, revision) unique inside `events`, first with the stream's
 * name in every row, then with its id: the log is copied into the current tables and
 * indexed whole.
 */
function migrate(db: Database.Database, columns: string[]): void {
  db.exec(`ALTER TABLE events RENAME TO events_before;\n${SCHEMA}`);
  if (columns.includes('stream')) {
    db.exec(`INSERT INTO streams (name) SELECT DISTINCT stream FROM events_before ORDER BY stream;
      INSERT INTO events (position, event_id, stream_id, revision, type, data, metadata, created)
        SELECT e.position, e.event_id, s.id, e.revision, e.type, e.data, e.metadata, e.created
        FROM events_before e JOIN streams s ON s.name = e.stream ORDER BY e.position;`);
  } else {
    db.exec(`INSERT INTO events (position, event_id, stream_id, revision, type, data, metadata, created)
      SELECT position, event_id, stream_id, revision, type, data, metadata, created FROM events_before ORDER BY position;`);
  }
  db.exec(`DROP TABLE events_before;
    INSERT INTO stream_index (stream_id, revision, position) SELECT stream_id, revision, position FROM events ORDER BY stream_id, revision;
    UPDATE log_state SET value = (SELECT coalesce(max(position), 0) FROM events) WHERE name = 'indexed_through';`);
}

export interface SqliteLogOptions {
  /** `FULL` (default) survives power loss; `NORMAL` only survives a process crash. */
  synchronous?: 'FULL' | 'NORMAL' | 'OFF';
}

/**
 * Pages of a log created now. A commit writes each page it changed to the WAL, a frame
 * (and a write call) each; appends change the last pages of the events table and of
 * its id index, so larger pages mean fewer frames per commit. In the closed-loop ingest
 * bench the gateway role acked 86-92k records/s with 16 KB pages against 76-79k with
 * SQLite's 4 KB (8 KB: 85-87k; 32 KB: 90-91k), with no loss in the open loop (ack p99
 * 6.6-7.2 ms against 8.4-9.7) or in a rebuild. A log created with other pages keeps them.
 */
const LOG_PAGE_SIZE = 16_384;

/** Opens (and creates, or migrates) the log file in WAL mode. */
export function openLog(path: string, options: SqliteLogOptions = {}): Database.Database {
  const db = openPrivateSqlite(path, { pageSize: LOG_PAGE_SIZE });
  db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  db.pragma('busy_timeout = 5000');
  // Keep the pages appends touch in memory. No connection checkpoints the WAL when it commits: the writer's
  // checkpointer thread does (core/wal-checkpointer.ts), so a checkpoint's copy and fsync never hold an ack.
  db.pragma('cache_size = -65536');
  db.pragma('wal_autocheckpoint = 0');
  db.transaction(() => {
    const columns = db.prepare("SELECT name FROM pragma_table_info('events')").pluck().all() as string[];
    const indexed = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'stream_index'").get() !== undefined;
    if (columns.length > 0 && !indexed) migrate(db, columns);
    else db.exec(SCHEMA);
  }).immediate();
  return db;
}
