/**
 * Worker thread entry: folds a SQLite file's WAL back into the file (started by
 * wal-checkpointer.ts). PASSIVE checkpoints on this connection run beside the owner's
 * commits and never block them (wal-checkpoint-pass.ts).
 */
import { basename } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { nameThisThread } from './thread-name.js';
import { checkpointPass } from './wal-checkpoint-pass.js';

export interface CheckpointerSettings {
  path: string;
  synchronous: 'OFF' | 'NORMAL' | 'FULL' | 'EXTRA';
  intervalMs: number;
}

const { path, synchronous, intervalMs } = workerData as CheckpointerSettings;
// "ckpt readmodels", "ckpt history", "ckpt webhooks": whose WAL this thread folds back.
nameThisThread(`ckpt ${basename(path, '.sqlite')}`);
const db = new Database(path, { fileMustExist: true });
// PASSIVE never waits. RESTART waits for a writer's transaction and for readers still in the WAL, and holds
// new writers back meanwhile: a tenth of a second at most, else it gives up until the next tick.
db.pragma('busy_timeout = 100');
db.pragma(`synchronous = ${synchronous}`);
db.pragma('wal_autocheckpoint = 0');

const timer = setInterval(() => checkpointPass(db), intervalMs);

parentPort!.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
