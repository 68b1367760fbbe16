/**
 * The projections role: the read models, kept in this thread (the API serves from their database), and
 * the position history, in a worker thread of its own when roles share the process (history/thread.ts),
 * so a replay or a backlog is applied on two cores. The read models' modules load as the role starts.
 */
import type Database from 'better-sqlite3';
import type { LogPosition } from '../core/event-store/port.js';
import type { RoleContext, RoleHandle } from '../core/role.js';
import { checkpointInBackground } from '../core/wal-checkpointer.js';
import { dropHistoryFromReadModels, historyDbPath, openHistoryReads, type HistoryRole } from './history/database.js';
import type { HistoryItemEncoder } from './history/index.js';
import { HistoryThread, type HistoryItemEncoderModule } from './history/thread.js';
import type { ProjectionRunner } from './index.js';
import { logOrigin, openReadModelDb, readModelsDbPath } from './runner.js';
import type { runnerView } from './view.js';

export interface ProjectionsOptions {
  /** The history item encoder (the API's: projections/ never imports api/), named for the history's thread, loaded for this one. */
  historyEncoder: { module: HistoryItemEncoderModule; load(): Promise<HistoryItemEncoder> };
  /**
   * Awaited once the history's thread has started and before this thread loads and catches up the read
   * models: the composition root starts webhook delivery and loads the API there, while the history replays.
   */
  beforeCatchUp?: () => Promise<void>;
}

/** What the API serves from and waits for: the read models' database, their runner's progress, the history's file. */
export interface ReadModelAccess {
  db: Database.Database;
  historyDbPath: string;
  /** The runners as the API sees them (live stream, readiness, /metrics' lag). */
  view: ReturnType<typeof runnerView>;
  /** Resolves once the read models include the event at `position`. */
  waitFor(position: LogPosition): Promise<void>;
  /** Applies what the store holds now to the read models, the history aside. */
  catchUp(): Promise<void>;
}

export interface ProjectionsRole extends RoleHandle {
  runner: ProjectionRunner;
  reads: ReadModelAccess;
  /** Resolves once the history has caught up with the log (the API listens only then). */
  historyCaughtUp: Promise<void>;
  /** Applies everything the store holds now to every read model, the history included. */
  catchUp(): Promise<void>;
}

/** Resolves once this thread's read models have caught up with the log and follow it; the history may still be catching up. */
export async function startProjections(ctx: RoleContext, options: ProjectionsOptions): Promise<ProjectionsRole> {
  const { config, store, clock, log } = ctx;
  const db = openReadModelDb(readModelsDbPath(config.dataDir), await logOrigin(store));
  // A history of an older layout is moved out of the read models' database.
  dropHistoryFromReadModels(db);
  const historyReads = openHistoryReads(historyDbPath(config.dataDir));
  // The history's thread starts before this thread loads the roles' modules: it loads its own and replays on the
  // other core meanwhile (started after them, it was the last to catch up in a rebuild).
  const historyThread = ctx.threads ? HistoryThread.start(config, options.historyEncoder.module, ctx.onThreadFailure) : null;
  // Awaited once this thread has caught up; a failure before that is not unhandled.
  historyThread?.catch(() => {});
  await options.beforeCatchUp?.();
  const [{ ProjectionRunner, readModelProjections, startHistory }, { runnerView }] = await Promise.all([import('./index.js'), import('./view.js')]);
  const inProcessHistory = async (): Promise<HistoryRole> =>
    startHistory(store, historyDbPath(config.dataDir), await options.historyEncoder.load(), log.child({ role: 'history' }));
  // Projection batches and API requests share this thread: checkpoints (and their fsync) run beside it.
  const checkpointer = checkpointInBackground(db);
  // Larger batches while it catches up at start (the API is built after) than in the live path: a replay goes faster.
  const runner = new ProjectionRunner(store, db, readModelProjections(), log.child({ role: 'projections' }), { startBatch: 16_000 });
  // The history catches up beside the other read models: a replay or a backlog is applied on two cores.
  const history = historyThread ?? inProcessHistory();
  history.catch(() => {});
  const historyCaughtUp = history.then(() => {});
  historyCaughtUp.catch(() => {});
  await runner.start();
  const { startCommandExpiry } = await import('./commands/expiry.js');
  const expiry = startCommandExpiry({ store, clock, db, log: log.child({ role: 'command-expiry' }) });
  return {
    runner,
    reads: {
      db,
      historyDbPath: historyDbPath(config.dataDir),
      view: runnerView(runner, historyReads, store, clock),
      waitFor: (p) => runner.waitFor(p),
      catchUp: () => runner.catchUp(),
    },
    historyCaughtUp,
    async catchUp() {
      await Promise.all([runner.catchUp(), (await history).catchUp()]);
    },
    async stop() {
      await expiry.stop();
      await runner.stop();
      await (await history).stop();
      historyReads.close();
      checkpointer.close();
    },
  };
}
