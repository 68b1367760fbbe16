/**
 * The position history in a worker thread of its own, as `fleet` runs it beside the
 * other read models: a replay or a backlog of fixes is applied on both cores, and the
 * history's commits do not hold the thread the API and the other read models share.
 * The API reads pages over its own read-only connection; the committed position is
 * read from that connection too (the checkpoint row the thread commits with its rows).
 */
import Database from 'better-sqlite3';
import type { Config } from '../../core/config.js';
import type { LogPosition } from '../../core/event-store/port.js';
import { startRoleThread, threadEntry } from '../../core/role-thread.js';
import { RunnerThreadClient, type FromRunnerThread } from '../runner-thread.js';
import { historyDbPath, historyPositionReader, type HistoryRole } from './database.js';

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

export class HistoryThread implements HistoryRole {
  readonly position: () => LogPosition | null;

  private constructor(
    private readonly client: RunnerThreadClient,
    readonly reads: Database.Database,
  ) {
    this.position = historyPositionReader(reads);
  }

  /** Starts the thread; resolves once the history has caught up with the log. */
  static async start(config: Config, encoder: HistoryItemEncoderModule, onFailure: (err: Error) => void): Promise<HistoryThread> {
    const data: HistoryThreadData = { config, encoder };
    const t = await startRoleThread<FromRunnerThread>(ENTRY, data, onFailure);
    // The thread created the database; this thread only reads it.
    const reads = new Database(historyDbPath(config.dataDir), { readonly: true, fileMustExist: true });
    return new HistoryThread(new RunnerThreadClient(t.worker, t.stopping, 'position history'), reads);
  }

  catchUp(): Promise<void> {
    return this.client.catchUp();
  }

  waitFor(position: LogPosition): Promise<void> {
    return this.client.waitFor(position);
  }

  stop(): Promise<void> {
    return this.client.stop(() => this.reads.close());
  }
}
