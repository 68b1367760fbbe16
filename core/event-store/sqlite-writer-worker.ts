/**
 * Worker thread entry: owns the write connection of the SQLite event store (see sqlite.ts).
 * Batches that arrive while a transaction is being written wait in `queued`; once it is
 * done, all of them go into the next transaction (group commit without a round trip).
 * Between transactions it keeps the stream index up to date (sqlite-stream-index.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { checkpointInBackground, type WalCheckpointer } from '../wal-checkpointer.js';
import { LogWriter } from './sqlite-log-writer.js';
import { openLog, type SqliteLogOptions } from './sqlite-schema.js';
import { decodeBatch, encodeOutcomes, type WireAppend } from './sqlite-wire.js';

/** `batch` is encodeBatch()'s text. */
export type WriterRequest = { batch: string } | { close: true };

/** The outcome of one transaction, covering the oldest `count` appends not yet answered. */
export type WriterReply = { count: number; outcomes: Float64Array } | { count: number; error: string };

export interface WriterSettings extends Required<SqliteLogOptions> {
  path: string;
  /** A quiet log still gets its tail indexed this often. */
  indexFlushIntervalMs: number;
}

const { path, synchronous, indexFlushIntervalMs } = workerData as WriterSettings;
const db = openLog(path, { synchronous });
/**
 * Checkpoints happen in a thread of their own, never in the commit path, and often: a
 * checkpoint's fsync makes the disk flush the pages it copied, and a commit's fsync that
 * comes meanwhile waits for that flush. At one a second, with 15,000 devices sending a
 * frame every 5 s, the slowest commit of each second took 19-21 ms (the rest under 1 ms)
 * and the gateway's ack p99 was 14-24 ms; at ten a second, 3-5 ms and 7-11 ms, with no
 * throughput lost in the closed-loop bench.
 */
const CHECKPOINT_INTERVAL_MS = 100;
/**
 * Started at this writer's first append. Every thread that opens the store has a writer, and
 * the history's and the webhooks' threads only read the log: their checkpointers would only
 * poll the WAL (one per file) that the appending threads' checkpointers already fold back,
 * the stream-index rows any writer adds included.
 */
let checkpointer: WalCheckpointer | null = null;
function appended(): void {
  checkpointer ??= checkpointInBackground(db, CHECKPOINT_INTERVAL_MS);
}
const writer = new LogWriter(db);
let queued: WireAppend[] = [];
let commitScheduled = false;
let closeRequested = false;
/** A quiet log's whole tail goes into the index, a step per turn (while steps come out full) so appends arriving meanwhile go first. */
function drainIndex(): void {
  if (!closeRequested && writer.drainIndexStep()) setImmediate(drainIndex);
}
const indexTimer = setInterval(drainIndex, indexFlushIntervalMs);
drainIndex();

/** Runs after every message that arrived in this turn has been queued. */
function commitQueued(): void {
  commitScheduled = false;
  const batch = queued;
  queued = [];
  if (batch.length > 0) {
    let reply: WriterReply;
    try {
      reply = { count: batch.length, outcomes: encodeOutcomes(writer.writeBatch(batch)) };
    } catch (err) {
      reply = { count: batch.length, error: err instanceof Error ? err.message : String(err) };
    }
    parentPort!.postMessage(reply);
    appended();
    // After the reply: acks never wait for index maintenance.
    writer.flushIndexIfDue();
  }
  if (closeRequested) {
    clearInterval(indexTimer);
    checkpointer?.close();
    db.close();
    parentPort!.close();
  }
}

parentPort!.on('message', (request: WriterRequest) => {
  if ('close' in request) closeRequested = true;
  else for (const append of decodeBatch(request.batch)) queued.push(append);
  if (!commitScheduled) {
    commitScheduled = true;
    setImmediate(commitQueued);
  }
});
