/**
 * The log's upkeep, in a thread of its own beside the writer (sqlite-log-upkeep-worker.ts):
 * it moves the log's tail into the stream index, and checkpoints the WALs of the log and
 * of the index. Neither is in the commit path: a checkpoint's copy and fsync, or an index
 * step, run there would hold every ack queued behind them.
 */
import type Database from 'better-sqlite3';
import { Worker } from 'node:worker_threads';
import { threadEntry } from '../role-thread.js';
import { openLog, type SqliteLogOptions } from './sqlite-schema.js';

/**
 * Events per index step: one transaction of the index file, whose WAL frames it writes. A step
 * rewrites a leaf per stream it holds, so a busy fleet's steps are cheaper per event the more
 * each holds per stream; larger steps than 16,000 saved little for tails twice as long
 * (docs/performance.md). A fleet sending rarely puts about one frame per stream in a step
 * whatever its size. Each reader keeps the tail in memory (sqlite-tail-positions.ts): a few MB
 * at most.
 */
export const INDEX_STEP = 16_000;

export interface LogUpkeepSettings extends Required<SqliteLogOptions> {
  path: string;
  /** How often a tail shorter than INDEX_STEP is moved into the stream index (longer ones go by steps at once). */
  indexIntervalMs: number;
}

export interface LogUpkeep {
  /**
   * Stops the thread once a step or a checkpoint under way has finished (the log is durable
   * either way), and resolves when it has released its lease (sqlite-upkeep-lease.ts) and exited.
   */
  close(): Promise<void>;
}

/** The upkeep thread's connection to the log and its index. */
export function openLogForUpkeep(path: string, options: SqliteLogOptions): Database.Database {
  const db = openLog(path, options);
  // A RESTART checkpoint waits for a writer's transaction and for readers still in the WAL, and holds
  // new writers back meanwhile: a tenth of a second at most, else it gives up until the next tick. An
  // index step that finds another process's step under way gives up likewise.
  db.pragma('busy_timeout = 100');
  // A step reads the log's newest pages of `events_tail` and rewrites a leaf of the index per stream; both
  // come from the OS's page cache as fast (docs/performance.md), and this thread should not hold the
  // writer's 64 MB.
  db.pragma('cache_size = -2048');
  return db;
}

export function startLogUpkeep(settings: LogUpkeepSettings): LogUpkeep {
  const worker = new Worker(threadEntry(import.meta.url, 'sqlite-log-upkeep-worker'), { workerData: settings });
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    close: () => {
      // Waited for: a thread stopped with its writer's would not release the lease, and the other
      // upkeep threads of the log would wait for it to run out. (A thread already gone ignores the post.)
      worker.ref();
      worker.postMessage('close');
      return exited;
    },
  };
}
