/**
 * The position history in a worker thread of its own, as `fleet` runs it beside the
 * other read models: a replay or a backlog of fixes is applied on both cores, and the
 * history's commits do not hold the thread the API and the other read models share.
 * Its progress is read through HistoryReads, opened by the composition root; pages through
 * api/history-pages.ts.
 */
import type { Config } from '../../core/config.js';
import { startRoleThread, threadEntry } from '../../core/role-thread.js';
import { RunnerThreadHost, type FromRunnerThread } from '../../core/runner-thread.js';
import type { HistoryRole } from './database.js';

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
  /** Starts the thread; resolves once the history has caught up with the log. */
  static async start(config: Config, encoder: HistoryItemEncoderModule, onFailure: (err: Error) => void): Promise<HistoryThread> {
    const data: HistoryThreadData = { config, encoder };
    const t = await startRoleThread<FromRunnerThread>(ENTRY, data, onFailure);
    return new HistoryThread(t.worker, t.stopping, 'position history');
  }

  stop(): Promise<void> {
    return this.stopThread();
  }
}
