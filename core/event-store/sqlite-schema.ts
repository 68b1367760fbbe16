/** The SQLite event log's table and connection settings, shared by the reader and the writer thread. */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL UNIQUE,
  stream   TEXT NOT NULL,
  revision INTEGER NOT NULL,
  type     TEXT NOT NULL,
  data     TEXT NOT NULL,
  metadata TEXT NOT NULL,
  created  INTEGER NOT NULL,
  UNIQUE (stream, revision)
);`;

export interface SqliteLogOptions {
  /** `FULL` (default) survives power loss; `NORMAL` only survives a process crash. */
  synchronous?: 'FULL' | 'NORMAL' | 'OFF';
}

/** Opens (and creates) the log file in WAL mode. */
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
  db.exec(SCHEMA);
  return db;
}
