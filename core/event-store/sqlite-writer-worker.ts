/** Worker thread entry: owns the write connection of the SQLite event store (see sqlite.ts). */
import { parentPort, workerData } from 'node:worker_threads';
import { openLog, type SqliteLogOptions } from './sqlite-schema.js';
import { LogWriter, type WireAppend } from './sqlite-log-writer.js';

export type WriterRequest = { batch: WireAppend[] } | { close: true };

const { path, synchronous } = workerData as { path: string } & Required<SqliteLogOptions>;
const db = openLog(path, { synchronous });
const writer = new LogWriter(db);

parentPort!.on('message', (request: WriterRequest) => {
  if ('close' in request) {
    db.close();
    parentPort!.close();
    return;
  }
  try {
    parentPort!.postMessage({ outcomes: writer.writeBatch(request.batch) });
  } catch (err) {
    parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
});
