/**
 * Worker thread entry: folds the log's WAL back into the database file, started by the
 * writer thread (sqlite-writer-worker.ts), whose own connection never checkpoints. A
 * checkpoint copies pages and fsyncs the file; in the writer's commit path it held every
 * ack behind it for as long as that took (the worst acks of a busy gateway). PASSIVE
 * checkpoints on this connection run beside the writer's commits and never block them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

export interface CheckpointerSettings {
  path: string;
  synchronous: 'FULL' | 'NORMAL' | 'OFF';
  intervalMs: number;
}

const { path, synchronous, intervalMs } = workerData as CheckpointerSettings;
const db = new Database(path, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma(`synchronous = ${synchronous}`);
db.pragma('wal_autocheckpoint = 0');

const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or closing: the next tick tries again; the WAL is durable meanwhile.
  }
}, intervalMs);

parentPort!.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
