/**
 * Worker thread entry: the log's upkeep (started by sqlite-log-upkeep.ts).
 *
 * The stream index: a step moves INDEX_STEP events of the tail into it, one transaction that
 * holds the index's write lock, never the log's, so appends never wait for it
 * (sqlite-schema.ts). Of the upkeep threads a log has (one per store that appends, in this
 * process and in others), one at a time does the upkeep: the one that holds the lease
 * (sqlite-upkeep-lease.ts); the others look at it once a second. Full steps are taken
 * as soon as the tail holds one (looked at ten times a second); what remains is moved every
 * `indexIntervalMs`. Smaller steps cost more per event: a step rewrites a leaf per stream it
 * holds, and the fewer events a step holds, the fewer it moves per leaf (docs/performance.md).
 *
 * The log's WAL is checkpointed ten times a second, so each checkpoint is small: a checkpoint's
 * fsync makes the disk flush the pages it copied, and a commit's fsync that comes meanwhile waits
 * for that flush (docs/performance.md). The index's WAL is folded back once a second: nothing
 * waits on its fsync.
 */
import { randomUUID } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { nameThisThread } from '../thread-name.js';
import { checkpointPass } from '../wal-checkpoint-pass.js';
import { INDEX_STEP, openLogForUpkeep, type LogUpkeepSettings } from './sqlite-log-upkeep.js';
import { StreamIndex } from './sqlite-stream-index.js';
import { UpkeepLease } from './sqlite-upkeep-lease.js';

const FULL_STEP_CHECK_MS = 100;
const LOG_CHECKPOINT_INTERVAL_MS = 100;
const INDEX_CHECKPOINT_INTERVAL_MS = 1_000;

nameThisThread('log-upkeep');
const { path, synchronous, indexIntervalMs } = workerData as LogUpkeepSettings;
const db = openLogForUpkeep(path, { synchronous });
const index = new StreamIndex(db);
/** Another upkeep thread of this log (another store's, in this process or another) may be the one that holds it. */
const lease = new UpkeepLease(db, randomUUID());

/** When a step last failed for another reason than a busy index: such failures are told at most once a minute. */
let lastToldFailure = -Infinity;
const TELL_FAILURES_EVERY_MS = 60_000;

/** Full steps while the tail holds one; with `rest`, what remains too. */
function indexTail(rest: boolean): void {
  try {
    while (index.tailLength() >= INDEX_STEP) index.flush(INDEX_STEP);
    if (rest) index.flush(INDEX_STEP);
  } catch (err) {
    // Busy (another process's step): the next tick goes on from where the index stands. Anything
    // else (a full disk, say) leaves the tail growing in every reader's memory: someone must hear of it.
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) return;
    const now = Date.now();
    if (now - lastToldFailure < TELL_FAILURES_EVERY_MS) return;
    lastToldFailure = now;
    process.stderr.write(`stream index of ${path}: a step failed, the tail stays unindexed until one succeeds: ${String(err)}\n`);
  }
}

/** Runs `work` every `ms` while this thread holds the lease. */
function whileLeasedEvery(ms: number, work: () => void): NodeJS.Timeout {
  return setInterval(() => {
    if (lease.holds(Date.now())) work();
  }, ms);
}

const timers = [
  whileLeasedEvery(FULL_STEP_CHECK_MS, () => indexTail(false)),
  whileLeasedEvery(indexIntervalMs, () => indexTail(true)),
  whileLeasedEvery(LOG_CHECKPOINT_INTERVAL_MS, () => checkpointPass(db, 'main')),
  whileLeasedEvery(INDEX_CHECKPOINT_INTERVAL_MS, () => checkpointPass(db, 'idx')),
];

parentPort!.on('message', () => {
  for (const timer of timers) clearInterval(timer);
  lease.release();
  db.close();
  parentPort!.close();
});
