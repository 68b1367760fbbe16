/**
 * Worker thread entry: folds a SQLite file's WAL back into the file (started by
 * wal-checkpointer.ts). PASSIVE checkpoints on this connection run beside the owner's
 * commits and never block them.
 *
 * The WAL starts over from its beginning only when a writer finds it wholly checkpointed,
 * which a writer committing every millisecond may never do while a PASSIVE pass runs
 * beside it. So once the WAL holds more than RESTART_FRAMES, a RESTART checkpoint follows
 * the PASSIVE pass: it holds writers back while it copies what the pass left (at most the
 * pages committed since the pass began) and until readers are done with the WAL (their reads are short),
 * and the next commit writes the WAL from its start again.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

export interface CheckpointerSettings {
  path: string;
  synchronous: 'OFF' | 'NORMAL' | 'FULL' | 'EXTRA';
  intervalMs: number;
}

/** WAL frames (pages) past which the WAL is made to start over: 64 MB of 4 KB pages. */
const RESTART_FRAMES = 16_384;

const { path, synchronous, intervalMs } = workerData as CheckpointerSettings;
const db = new Database(path, { fileMustExist: true });
// PASSIVE never waits. RESTART waits for a writer's transaction and for readers still in the WAL, and holds
// new writers back meanwhile: a tenth of a second at most, else it gives up until the next tick.
db.pragma('busy_timeout = 100');
db.pragma(`synchronous = ${synchronous}`);
db.pragma('wal_autocheckpoint = 0');

const timer = setInterval(() => {
  try {
    const [pass] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    if (pass && pass.log > RESTART_FRAMES) db.pragma('wal_checkpoint(RESTART)');
  } catch {
    // Busy or closing: the next tick tries again; the WAL is durable meanwhile.
  }
}, intervalMs);

parentPort!.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
