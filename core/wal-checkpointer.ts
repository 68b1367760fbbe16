/**
 * A SQLite file's WAL checkpoints, in a thread of their own (wal-checkpointer-worker.ts).
 * A checkpoint copies pages into the file and fsyncs it; run by the connection that
 * commits (SQLite's automatic checkpoint), it holds that thread for as long as the
 * fsync takes, tens of milliseconds on a disk busy with the log's commits. Every
 * database that commits often on a thread that must stay responsive (the read models,
 * the delivery queue; the event log has its upkeep thread, sqlite-log-upkeep.ts) turns
 * its automatic checkpoints off (`wal_autocheckpoint = 0`) and starts one of these beside it.
 */
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { threadEntry } from './role-thread.js';
import type { CheckpointerSettings } from './wal-checkpointer-worker.js';

/** How often the WAL is checkpointed, unless the owner says otherwise: at a busy gateway's rate it stays a few MB. */
const CHECKPOINT_INTERVAL_MS = 1000;

const BUSY_TIMEOUT_MS = 5000;

export interface WalCheckpointer {
  /** Stops the thread (its last pass may still be running; the WAL is durable either way). */
  close(): void;
}

/** PRAGMA synchronous reads back as a number. */
const SYNCHRONOUS_LEVELS: ReadonlyArray<CheckpointerSettings['synchronous']> = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];

/**
 * Turns `db`'s automatic checkpoints off and checkpoints its file from a thread every `intervalMs`,
 * as durably as `db` commits (its `synchronous`); nothing for `:memory:`.
 */
export function checkpointInBackground(db: Database.Database, intervalMs = CHECKPOINT_INTERVAL_MS): WalCheckpointer {
  if (db.memory) return { close() {} };
  db.pragma('wal_autocheckpoint = 0');
  // A RESTART checkpoint (a WAL past 64 MB) holds writers back while it finishes: the owner waits for it rather than failing.
  if ((db.pragma('busy_timeout', { simple: true }) as number) < BUSY_TIMEOUT_MS) db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  const synchronous = SYNCHRONOUS_LEVELS[db.pragma('synchronous', { simple: true }) as number] ?? 'FULL';
  const settings: CheckpointerSettings = { path: db.name, synchronous, intervalMs };
  const worker = new Worker(threadEntry(import.meta.url, 'wal-checkpointer-worker'), { workerData: settings });
  worker.unref();
  // A thread that could not open the file (the owner closed and removed it before the thread started, as a test's
  // cleanup does) fails alone: the owner, if still open, checkpoints at its commits again, as SQLite does by default.
  worker.on('error', () => {
    if (db.open) db.pragma('wal_autocheckpoint = 1000');
  });
  return { close: () => worker.postMessage('close') };
}
