/**
 * The position history in a worker thread of its own, as `fleet` runs it beside the
 * other read models: a replay or a backlog of fixes is applied on both cores, and the
 * history's commits do not hold the thread the API and the other read models share.
 * The API reads pages over its own read-only connection; the committed position is
 * read from that connection too (the checkpoint row the thread commits with its rows).
 */
import Database from 'better-sqlite3';
import type { Worker } from 'node:worker_threads';
import type { Config } from '../../core/config.js';
import type { LogPosition } from '../../core/event-store/port.js';
import { startRoleThread, threadEntry } from '../../core/role-thread.js';
import { checkpointReader } from '../runner.js';
import { RunnerThreadHost, type FromRunnerThread } from '../runner-thread.js';
import { historyDbPath, type HistoryRole } from './database.js';

const ENTRY = threadEntry(import.meta.url, 'thread-entry');

/**
 * How the thread gets the history item encoder (functions do not cross threads): the URL
 * of a module and the name of its export. The composition root names the API's
 * (projections/ never imports api/).
 */
export interface HistoryItemEncoderModule {
  url: string;
  exportName: string;
}

export interface HistoryThreadData {
  config: Config;
  encoder: HistoryItemEncoderModule;
}

export class HistoryThread extends RunnerThreadHost implements HistoryRole {
  readonly position: () => LogPosition | null;

  /** Starts the thread; resolves once the history has caught up with the log. */
  static async start(config: Config, encoder: HistoryItemEncoderModule, onFailure: (err: Error) => void): Promise<HistoryThread> {
    const data: HistoryThreadData = { config, encoder };
    const t = await startRoleThread<FromRunnerThread>(ENTRY, data, onFailure);
    // The thread created the database; this thread only reads it.
    const reads = new Database(historyDbPath(config.dataDir), { readonly: true, fileMustExist: true });
    return new HistoryThread(t.worker, t.stopping, reads);
  }

  private constructor(
    worker: Worker,
    stopping: () => void,
    readonly reads: Database.Database,
  ) {
    super(worker, stopping, 'position history');
    this.position = checkpointReader(reads);
  }

  stop(): Promise<void> {
    return this.stopThread(() => this.reads.close());
  }
}
