/** The SQLite event log's tables and connection settings, shared by the reader and the writer thread. */
import Database from 'better-sqlite3';
import { makeSqliteFilesPrivate, openPrivateSqlite } from '../private-files.js';
import { StreamIndex } from './sqlite-stream-index.js';

/**
 * `events` is the log, in commit order; it alone is the truth. Finding a stream's events
 * goes through the stream index (STREAM_INDEX_SCHEMA), kept in bulk beside it, the way
 * EventStoreDB indexes its log: a per-event (stream, revision) b-tree costs one dirty page
 * per stream per commit, and with a thousand devices appending together that was most of
 * what every commit wrote. Events after the index's `indexed_through` are the tail, found
 * by `events_tail`, a narrow index in position order that only ever grows at its end
 * (each connection reads it into a map by stream as it goes: sqlite-tail-positions.ts).
 * Stream names are stored once, in `streams`.
 */
const LOG_SCHEMA = `
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
CREATE INDEX IF NOT EXISTS events_tail ON events (position, stream_id, revision);`;

/**
 * The stream index lives in a file of its own beside the log (`<log>-index`), attached to
 * every connection of the log as `idx`. It is derived from the log and can always be rebuilt
 * from it. Apart, its steps take the index's write lock, never the log's, so no append waits
 * for one, and its pages can be small: a log that has run a while gives each device's
 * newest entries a leaf of their own, which every step that holds the device rewrites
 * (see docs/architecture.md, The stream index). `through_event` is the id of the event at
 * `indexed_through`: an index that does not match its log (a log restored from a copy, say)
 * is rebuilt at open. `upkeep_lease` says which upkeep thread looks after the log
 * (sqlite-upkeep-lease.ts).
 */
const STREAM_INDEX_SCHEMA = `
CREATE TABLE IF NOT EXISTS idx.stream_index (
  stream_id INTEGER NOT NULL,
  revision  INTEGER NOT NULL,
  position  INTEGER NOT NULL,
  PRIMARY KEY (stream_id, revision)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idx.index_state (
  id              INTEGER PRIMARY KEY CHECK (id = 1),
  indexed_through INTEGER NOT NULL,
  through_event   TEXT
);
INSERT OR IGNORE INTO idx.index_state (id, indexed_through, through_event) VALUES (1, 0, NULL);
CREATE TABLE IF NOT EXISTS idx.upkeep_lease (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  holder     TEXT NOT NULL,
  renewed_at INTEGER NOT NULL
);`;

/** SQLite's default: a step rewrites one leaf per stream it holds, so the smaller the leaf, the less it writes. */
const STREAM_INDEX_PAGE_SIZE = 4096;

/** The stream index's file for the log at `path`. */
export function streamIndexPath(path: string): string {
  return path === ':memory:' ? path : `${path}-index`;
}

/**
 * Earlier layouts kept (stream, revision) unique inside `events`, first with the stream's
 * name in every row, then with its id: the log is copied into the current tables (and
 * indexed whole at open, as a log without an index is).
 */
function migrateEvents(db: Database.Database, columns: string[]): void {
  db.exec(`ALTER TABLE events RENAME TO events_before;\n${LOG_SCHEMA}`);
  if (columns.includes('stream')) {
    db.exec(`INSERT INTO streams (name) SELECT DISTINCT stream FROM events_before ORDER BY stream;
      INSERT INTO events (position, event_id, stream_id, revision, type, data, metadata, created)
        SELECT e.position, e.event_id, s.id, e.revision, e.type, e.data, e.metadata, e.created
        FROM events_before e JOIN streams s ON s.name = e.stream ORDER BY e.position;`);
  } else {
    db.exec(`INSERT INTO events (position, event_id, stream_id, revision, type, data, metadata, created)
      SELECT position, event_id, stream_id, revision, type, data, metadata, created FROM events_before ORDER BY position;`);
  }
  db.exec('DROP TABLE events_before;');
}

/**
 * A tail longer than this is indexed at open, in one sorted pass (a log migrated, or whose
 * index was missing or did not match it), so no connection starts by reading it into memory.
 */
export const INDEX_AT_OPEN_EVENTS = 100_000;

/** Clears an index that does not match the log, and indexes a long tail (one step, nested in the open's transaction). */
function checkStreamIndex(db: Database.Database): void {
  const state = db.prepare('SELECT indexed_through AS through, through_event AS event FROM idx.index_state').get() as {
    through: number;
    event: string | null;
  };
  const atThrough = db.prepare('SELECT event_id FROM events WHERE position = ?').pluck();
  if (state.through > 0 && atThrough.get(state.through) !== state.event) {
    db.exec('DELETE FROM idx.stream_index; UPDATE idx.index_state SET indexed_through = 0, through_event = NULL;');
    state.through = 0;
  }
  const index = new StreamIndex(db);
  if (index.tailLength() >= INDEX_AT_OPEN_EVENTS) index.flush(Number.MAX_SAFE_INTEGER);
}

export interface SqliteLogOptions {
  /** `FULL` (default) survives power loss; `NORMAL` only survives a process crash. */
  synchronous?: 'FULL' | 'NORMAL' | 'OFF';
}

/**
 * Pages of a log created now: 16 KB. A commit writes each page it changed to the WAL, a
 * frame (and a write call) each; appends change the last pages of the events table and of
 * its id index, so larger pages mean fewer frames per commit; 32 KB gained nothing more
 * (docs/performance.md). A log created with other pages keeps them.
 */
const LOG_PAGE_SIZE = 16_384;

function attachStreamIndex(db: Database.Database, indexPath: string): void {
  try {
    db.prepare('ATTACH DATABASE ? AS idx').run(indexPath);
    db.pragma(`idx.page_size = ${STREAM_INDEX_PAGE_SIZE}`);
    db.pragma('idx.journal_mode = WAL');
    db.prepare('SELECT count(*) FROM idx.sqlite_master').get();
  } catch (err) {
    // Not removed here: another process may have it open. Derived, it is safe to remove once all are stopped.
    throw new Error(
      `the stream index ${indexPath} cannot be read (${err instanceof Error ? err.message : String(err)}); ` +
        'it is derived from the log: stop every process using the data directory, remove it (with its -wal and -shm files) and start again to rebuild it',
    );
  }
  if (indexPath !== ':memory:') makeSqliteFilesPrivate(indexPath);
  // Derived from the log: a step a power cut loses leaves its events in the tail for the next one.
  db.pragma('idx.synchronous = NORMAL');
  db.pragma('idx.cache_size = -2048');
}

/**
 * Opens (and creates, or migrates) the log file in WAL mode, its stream index attached as
 * `idx`. A transaction that appends must take the log's write lock with its first statement
 * rather than `BEGIN IMMEDIATE`, which would take the index's as well.
 */
export function openLog(path: string, options: SqliteLogOptions = {}): Database.Database {
  const db = openPrivateSqlite(path, { pageSize: LOG_PAGE_SIZE });
  db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  db.pragma('busy_timeout = 5000');
  // Keep the pages appends touch in memory. No connection checkpoints the WAL when it commits: the log's
  // upkeep thread does (sqlite-log-upkeep.ts), so a checkpoint's copy and fsync never hold an ack.
  db.pragma('cache_size = -65536');
  db.pragma('wal_autocheckpoint = 0');
  try {
    attachStreamIndex(db, streamIndexPath(path));
  } catch (err) {
    db.close();
    throw err;
  }
  db.transaction(() => {
    const columns = db.prepare("SELECT name FROM main.pragma_table_info('events')").pluck().all() as string[];
    const current = db.prepare("SELECT 1 FROM main.sqlite_master WHERE name = 'events_tail'").get() !== undefined;
    if (columns.length > 0 && !current) migrateEvents(db, columns);
    db.exec(LOG_SCHEMA);
    // The index and its state lived in the log file until the index had a file of its own.
    db.exec('DROP TABLE IF EXISTS main.stream_index; DROP TABLE IF EXISTS main.log_state;');
    db.exec(STREAM_INDEX_SCHEMA);
    checkStreamIndex(db);
  }).immediate();
  return db;
}
