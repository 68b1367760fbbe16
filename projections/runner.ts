/**
 * The projection runners and their database. A runner follows the log from its checkpoint
 * and commits each batch's rows with the checkpoint that covers them (runner/core.ts); how
 * live events become batches is the runner's kind, so options that do not go together
 * cannot be written:
 * - ProjectionRunner (runner/gathered.ts): gathered in memory, applied once the subscription
 *   pauses or after `liveDelayMs`; `onApplied` listeners and `skip` (the read models, webhooks).
 * - ApplyOnArrivalRunner (runner/apply-on-arrival.ts): applied as they arrive into an open
 *   transaction, committed after `liveDelayMs` (the position history).
 */
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import type { EventStore } from '../core/event-store/port.js';
import { openPrivateSqlite } from '../core/private-files.js';

export { ProjectionRunner, type RunnerOptions } from './runner/gathered.js';
export { ApplyOnArrivalRunner, type ApplyOnArrivalOptions } from './runner/apply-on-arrival.js';
export type { BatchOptions, SkipTypes } from './runner/options.js';
export { checkpointReader } from './runner/checkpoint.js';

/**
 * Bump when a projection derives something else from the same log (a new
 * rule, a fixed bug): read models built by another version are dropped when
 * opened and rebuilt from the log, so no row of the old logic survives.
 * 2: future-dated fixes no longer count (projections/usable-fix.ts).
 * 3: implausible fixes (core/fix-plausibility.ts) are in no read model, history included.
 * 4: webhook endpoints read model (built from the whole log, like any new table).
 * 5: panel users and sessions read model.
 * 6: the live stream's feed by customer and log position.
 * 7: device commands read model, devices' command_texts, command events in the stream feed.
 * 8: trips, stops, idling and accumulators (projections/trips/).
 * 9: sensor attributes on latest positions; status records' ignition and geofences in trips;
 *    geofence dwell thresholds and what each visit raised.
 */
export const READ_MODEL_VERSION = 10;

/** Where the read models (all but the history and webhook delivery) keep their database in a data dir. */
export const readModelsDbPath = (dataDir: string): string => join(dataDir, 'readmodels.sqlite');

/**
 * Opens (creating) a read-model database. `logOrigin`, the id of the log's first event (logOrigin()),
 * is what its rows were built from: read models of another log (a store switched, a database restored
 * from elsewhere) are dropped and rebuilt, as their checkpoint means nothing in this one. Readers that
 * only read pass none.
 */
export function openReadModelDb(path: string, logOrigin?: string | null): Database.Database {
  const db = openPrivateSqlite(path);
  // The log is the source of truth: a lost read-model commit is replayed from the checkpoint.
  db.pragma('synchronous = NORMAL');
  // A rebuild writes hundreds of thousands of rows: their index pages stay in memory (64 MB) between batches
  // instead of being read back from the file. Without a checkpointer thread (core/wal-checkpointer.ts, as the
  // platform runs it), the WAL is folded back into the file (the only fsync with synchronous NORMAL) every 40 MB
  // rather than every 4 MB.
  db.pragma('cache_size = -65536');
  db.pragma('temp_store = MEMORY');
  db.pragma('wal_autocheckpoint = 10000');
  if (db.pragma('user_version', { simple: true }) !== READ_MODEL_VERSION || !ofLog(db, logOrigin)) dropEverything(db);
  db.exec(`
    CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, stream TEXT NOT NULL, event TEXT NOT NULL);`);
  if (logOrigin) db.prepare("INSERT OR REPLACE INTO checkpoints (name, position) VALUES ('log-origin', ?)").run(logOrigin);
  return db;
}

/** The id of the log's first event: which log a read model was built from (null: the log is empty). */
export async function logOrigin(store: EventStore): Promise<string | null> {
  return (await store.readAll({ maxCount: 1 }))[0]?.id ?? null;
}

/** Whether the database's rows come from the log that starts with `origin` (or nothing says otherwise). */
function ofLog(db: Database.Database, origin: string | null | undefined): boolean {
  if (!origin) return true;
  const hasCheckpoints = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'").pluck().get();
  if (!hasCheckpoints) return true;
  const stored = db.prepare("SELECT position FROM checkpoints WHERE name = 'log-origin'").pluck().get() as string | undefined;
  return stored === undefined || stored === origin;
}

/** Read models of another version: every table goes (the outbox too: its events are derived again on the replay). */
function dropEverything(db: Database.Database): void {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
  db.transaction(() => {
    for (const t of tables) db.exec(`DROP TABLE "${t}"`);
    db.pragma(`user_version = ${READ_MODEL_VERSION}`);
  })();
}
