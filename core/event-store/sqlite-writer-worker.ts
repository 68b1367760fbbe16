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

/** `batch` is encodeBatch()'s text; `probe` asks for a small committed write (probeWrite in sqlite.ts). */
export type WriterRequest = { batch: string } | { probe: true } | { close: true };

/**
 * The outcome of one transaction, covering the oldest `count` appends not yet answered (`code`:
 * SQLite's extended error code, SQLITE_FULL say), or of a probe.
 */
export type WriterReply =
  | { count: number; outcomes: Float64Array }
  | { count: number; error: string; code: string }
  | { probe: true; error: string | null; code: string | null };

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
let probeRequested = false;

const errorCode = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'WRITER_ERROR';
};

/**
 * One row rewritten in a table of its own: a commit of the log file (its WAL grows by a frame,
 * and it is synced like an append), which fails as an append would while the disk is full or
 * the file read-only, and touches no event. The table is created at the first probe.
 */
function probe(): WriterReply {
  try {
    db.exec('CREATE TABLE IF NOT EXISTS write_probe (id INTEGER PRIMARY KEY CHECK (id = 1), at INTEGER NOT NULL)');
    db.prepare('INSERT INTO write_probe (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at').run(Date.now());
    return { probe: true, error: null, code: null };
  } catch (err) {
    return { probe: true, error: err instanceof Error ? err.message : String(err), code: errorCode(err) };
  }
}

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
      reply = { count: batch.length, error: err instanceof Error ? err.message : String(err), code: errorCode(err) };
    }
    parentPort!.postMessage(reply);
  }
  if (probeRequested) {
    probeRequested = false;
    parentPort!.postMessage(probe());
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
  else if ('probe' in request) probeRequested = true;
  else for (const append of decodeBatch(request.batch)) queued.push(append);
  if (!commitScheduled) {
    commitScheduled = true;
    setImmediate(commitQueued);
  }
});
