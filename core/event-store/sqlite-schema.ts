/** The SQLite event log's tables and connection settings, shared by the reader and the writer thread. */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Stream names are stored once, in `streams`; events carry the integer id. A thousand
 * devices append to a thousand stream tails at once, and each tail is a page of the
 * (stream, revision) index: small integer keys pack many tails per page, so a commit
 * writes far fewer pages than with the names inline.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS streams (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS events (
  position  INTEGER PRIMARY KEY,
  event_id  TEXT NOT NULL UNIQUE,
  stream_id INTEGER NOT NULL REFERENCES streams (id),
  revision  INTEGER NOT NULL,
  type      TEXT NOT NULL,
  data      TEXT NOT NULL,
  metadata  TEXT NOT NULL,
  created   INTEGER NOT NULL,
  UNIQUE (stream_id, revision)
);`;

/** Logs written before streams had ids kept the name in each event row. */
const MIGRATE_NAMED_STREAMS = `
ALTER TABLE events RENAME TO events_named;
${SCHEMA}
INSERT INTO streams (name) SELECT DISTINCT stream FROM events_named ORDER BY stream;
INSERT INTO events (position, event_id, stream_id, revision, type, data, metadata, created)
  SELECT e.position, e.event_id, s.id, e.revision, e.type, e.data, e.metadata, e.created
  FROM events_named e JOIN streams s ON s.name = e.stream ORDER BY e.position;
DROP TABLE events_named;`;

export interface SqliteLogOptions {
  /** `FULL` (default) survives power loss; `NORMAL` only survives a process crash. */
  synchronous?: 'FULL' | 'NORMAL' | 'OFF';
}

/** Opens (and creates, or migrates) the log file in WAL mode. */
export function openLog(path: string, options: SqliteLogOptions = {}): Database.Database {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  db.pragma('busy_timeout = 5000');
  // Telemetry appends touch one index page per device stream: keep those pages in memory,
  // and checkpoint the WAL in larger, rarer steps (each checkpoint is an fsync of the db file).
  db.pragma('cache_size = -65536');
  db.pragma('wal_autocheckpoint = 10000');
  db.transaction(() => {
    const columns = db.prepare("SELECT name FROM pragma_table_info('events')").pluck().all() as string[];
    db.exec(columns.includes('stream') ? MIGRATE_NAMED_STREAMS : SCHEMA);
  }).immediate();
  return db;
}
