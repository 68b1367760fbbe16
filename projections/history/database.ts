/**
 * The position history's own database (history.sqlite beside readmodels.sqlite)
 * and the runner that keeps it, wherever it runs: in the caller's thread, or in a
 * thread of its own (thread.ts). Both expose the same HistoryRole to the
 * composition root; its progress (readiness, lag) is read through HistoryReads, a
 * read-only connection of its own, either way. The API reads pages in a thread of
 * their own (api/history-pages.ts).
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { EventStore, LogPosition } from '../../core/event-store/port.js';
import type { Logger } from '../../core/logger.js';
import { checkpointInBackground } from '../../core/wal-checkpointer.js';
import { ApplyOnArrivalRunner, checkpointReader, logOrigin, openReadModelDb } from '../runner.js';
import { createHistoryTable, historyProjection, type HistoryItemEncoder } from './index.js';

export const historyDbPath = (dataDir: string): string => join(dataDir, 'history.sqlite');

/** The history's runner as the composition root sees it, in this thread or another. */
export interface HistoryRole {
  catchUp(): Promise<void>;
  waitFor(position: LogPosition): Promise<void>;
  stop(): Promise<void>;
}

/** How far the history's runner has committed, as readers see it. */
export interface HistoryReads {
  /** The log position the history is committed up to (null: nothing applied yet). */
  position(): LogPosition | null;
  close(): void;
}

/**
 * Opens the readers' connection, creating the database first if need be: it opens before
 * the history's runner has started, so the API can be built while the history catches up
 * (and the history pages' thread finds the file).
 */
export function openHistoryReads(path: string): HistoryReads {
  const created = openHistoryDb(path);
  const db = new Database(path, { readonly: true, fileMustExist: true });
  // Closed after the reader opened: the last connection to close would remove the WAL files.
  created.close();
  return { position: checkpointReader(db), close: () => db.close() };
}

/**
 * Pages of the history kept in memory by its writer between batches: enough for each
 * device's newest leaf page in a fleet of a few thousand (where its inserts land); a
 * larger fleet's pages come back from the OS cache, and a larger fixed cache only cost
 * RSS (docs/performance.md).
 */
const HISTORY_CACHE_PAGES = 4096;

/**
 * Fixes applied in one transaction at most: batches of 16,000. Each commit writes every page
 * it changed to the WAL, and a fleet's interleaved fixes change a leaf page per device per
 * batch, so fewer, larger commits write each leaf for more rows (docs/performance.md).
 */
const HISTORY_BATCH = 16_000;

/**
 * Fixes applied in one transaction while the history catches up at start (a rebuild, or a
 * backlog after a restart): the API listens once it has, and fewer, larger commits wait less
 * for the disk, for the same CPU and peak RSS as live batches (the cache stays at its live
 * size: historyCacheSizer; docs/performance.md).
 */
const HISTORY_START_BATCH = 48_000;

/**
 * Sizes the writer's page cache for a batch of `events` fixes: every page the batch
 * changes must stay in the cache until the commit, or SQLite spills it to the WAL early
 * and writes it again at the commit. A small batch sets the base size back, which frees
 * the rest. Never more than a live batch's (HISTORY_BATCH): a start batch rebuilds as fast
 * in it, and a larger cache keeps RSS that malloc does not give back (docs/performance.md).
 */
export function historyCacheSizer(db: Database.Database): (events: number) => void {
  let pages = 0;
  return (events) => {
    const wanted = Math.max(HISTORY_CACHE_PAGES, Math.ceil((Math.min(events, HISTORY_BATCH) + 1024) / 1024) * 1024);
    if (wanted === pages) return;
    db.pragma(`cache_size = ${wanted}`);
    pages = wanted;
  };
}

/**
 * Live fixes are committed together up to this long after the first of them: history is read
 * by pages, never followed live, and a runner that committed at every commit notice competed
 * with the gateway for the cores (docs/performance.md). Each fix is applied as it arrives, in
 * the batch's open transaction (ApplyOnArrivalRunner): waiting in memory for the batch, the fixes
 * outlived the young generation (see docs/architecture.md, The position history).
 */
const HISTORY_LIVE_DELAY_MS = 250;

/**
 * WAL pages (64 MB) past which the history's writer checkpoints the WAL itself, after the
 * commit that passed them. SQLite starts a WAL over only when a transaction begins on a WAL
 * wholly checkpointed, or through a RESTART checkpoint. Applying fixes on arrival, the writer
 * begins its next batch as soon as the last one committed, before the checkpointer's thread
 * has copied it, and that thread's RESTART (core/wal-checkpoint-pass.ts) rarely finds the
 * write lock free between two batches: left to it, the WAL grows with the log (docs/performance.md).
 */
const HISTORY_WAL_RESTART_PAGES = 16_384;

/** Opens (creating) the history database: a read-model database, versioned and checkpointed like the others. */
export function openHistoryDb(path: string, origin?: string | null): Database.Database {
  const db = openReadModelDb(path, origin);
  db.pragma(`cache_size = ${HISTORY_CACHE_PAGES}`);
  dropOlderLayout(db);
  createHistoryTable(db);
  return db;
}

/**
 * A history of the layout before its integer key (rows keyed on device_id, fix_time, event_id)
 * is dropped with its checkpoint: the history's runner rebuilds it from the log, and the other
 * read models keep theirs.
 */
function dropOlderLayout(db: Database.Database): void {
  const columns = db.prepare("SELECT name FROM pragma_table_info('positions')").pluck().all() as string[];
  if (!columns.includes('device_id')) return;
  db.transaction(() => db.exec('DROP TABLE positions; DELETE FROM checkpoints;'))();
}

/**
 * Starts a runner of the history alone over its database at `path`, caught up with
 * the log when this resolves. Commits run in the caller's thread, checkpoints beside it.
 */
export async function startHistory(store: EventStore, path: string, encodeItem: HistoryItemEncoder, log: Logger): Promise<HistoryRole> {
  const db = openHistoryDb(path, await logOrigin(store));
  const checkpointer = checkpointInBackground(db);
  db.pragma(`wal_autocheckpoint = ${HISTORY_WAL_RESTART_PAGES}`);
  const runner = new ApplyOnArrivalRunner(store, db, [historyProjection(encodeItem, log)], log, {
    liveDelayMs: HISTORY_LIVE_DELAY_MS,
    maxBatch: HISTORY_BATCH,
    startBatch: HISTORY_START_BATCH,
    beforeBatch: historyCacheSizer(db),
  });
  await runner.start();
  let stopped: Promise<void> | null = null;
  return {
    catchUp: () => runner.catchUp(),
    waitFor: (p) => runner.waitFor(p),
    stop() {
      stopped ??= (async () => {
        await runner.stop();
        checkpointer.close();
        db.close();
      })();
      return stopped;
    },
  };
}

/**
 * A history kept inside the read-model database (before it had one of its own) is dropped
 * there: its layout is older than the history's, which its runner builds from the log.
 */
export function dropHistoryFromReadModels(readModelDb: Database.Database): void {
  readModelDb.exec('DROP TABLE IF EXISTS positions');
}
