/**
 * Worker thread entry: owns the write connection of the SQLite event store (see sqlite.ts).
 * Batches that arrive while a transaction is being written wait in `queued`; once it is
 * done, all of them go into the next transaction (group commit without a round trip).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { nameThisThread } from '../thread-name.js';
import { LogWriter } from './sqlite-log-writer.js';
import { startLogUpkeep, type LogUpkeepSettings } from './sqlite-log-upkeep.js';
import { openLog } from './sqlite-schema.js';
import { decodeBatch, encodeOutcomes, type WireAppend } from './sqlite-wire.js';

/** `batch` is encodeBatch()'s text. */
export type WriterRequest = { batch: string } | { close: true };

/** The outcome of one transaction, covering the oldest `count` appends not yet answered. */
export type WriterReply = { count: number; outcomes: Float64Array } | { count: number; error: string };

export type WriterSettings = LogUpkeepSettings;

nameThisThread('log-writer');
const settings = workerData as WriterSettings;
const db = openLog(settings.path, { synchronous: settings.synchronous });
/** Started with the writer, which its store starts at its first append (sqlite.ts): a thread that only reads the log has neither. */
const upkeep = startLogUpkeep(settings);
const writer = new LogWriter(db);
let queued: WireAppend[] = [];
let commitScheduled = false;
let closeRequested = false;

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
  }
  if (closeRequested) {
    void upkeep.close().then(() => {
      db.close();
      parentPort!.close();
    });
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
