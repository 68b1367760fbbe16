/**
 * One checkpoint of a SQLite file's WAL, run beside the file's writers (by
 * wal-checkpointer-worker.ts, and by the event log's upkeep thread for the log and its
 * stream index).
 *
 * The WAL starts over from its beginning only when a writer finds it wholly checkpointed,
 * which a writer committing every millisecond may never do while a PASSIVE pass runs
 * beside it. So once the WAL holds more than RESTART_FRAMES, a RESTART checkpoint follows
 * the PASSIVE pass: it holds writers back while it copies what the pass left (at most the
 * pages committed since the pass began) and until readers are done with the WAL (their reads are short),
 * and the next commit writes the WAL from its start again.
 */
import type Database from 'better-sqlite3';

/** WAL frames (pages) past which the WAL is made to start over: 64 MB of 4 KB pages. */
const RESTART_FRAMES = 16_384;

/**
 * Checkpoints `schema` of `db` (a connection whose busy_timeout bounds how long a RESTART
 * may wait); busy or closing, the next pass tries again, and the WAL is durable meanwhile.
 */
export function checkpointPass(db: Database.Database, schema = 'main'): void {
  try {
    const [pass] = db.pragma(`${schema}.wal_checkpoint(PASSIVE)`) as Array<{ busy: number; log: number; checkpointed: number }>;
    if (pass && pass.log > RESTART_FRAMES) db.pragma(`${schema}.wal_checkpoint(RESTART)`);
  } catch {
    // Busy or closing: the next pass tries again.
  }
}
