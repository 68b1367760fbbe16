/**
 * Worker thread entry: the position history's runner with its own event loop, its own
 * handle on the store and its own database (thread.ts starts it).
 */
import { workerData } from 'node:worker_threads';
import { createLogger } from '../../core/logger.js';
import { lowerThisThreadsPriority } from '../../core/thread-priority.js';
import { runRunnerThread } from '../runner-thread.js';
import { historyDbPath, startHistory } from './database.js';
import type { HistoryItemEncoder } from './index.js';
import type { HistoryThreadData } from './thread.js';

/**
 * Once caught up, the history's thread yields to the gateway's and the other read models' when
 * the cores are all busy: nobody follows the history live (it is read by pages), while a device
 * waits for its ack and the map for its latest position. On a quiet machine it runs as fast as
 * before; under a burst it falls behind and catches up after. Seven alternated pairs of the
 * open-loop ingest bench (15,000 devices, all roles): ack p99 mean 162 ms against 253 ms at the
 * default priority, p50 mean 7.9 ms against 16.7 ms, ahead in six pairs of seven on each
 * (docs/architecture.md, "The history yields the cores under load"). Not before it has caught
 * up: the API opens only once every read model has, so the replay at a start keeps its full share.
 */
const HISTORY_THREAD_NICENESS = 10;

const { config, encoder } = workerData as HistoryThreadData;
runRunnerThread(config.store, async (store) => {
  const encodeItem = ((await import(encoder.url)) as Record<string, HistoryItemEncoder>)[encoder.exportName];
  if (typeof encodeItem !== 'function') throw new Error(`${encoder.url} has no function ${encoder.exportName}`);
  const history = await startHistory(store, historyDbPath(config.dataDir), encodeItem, createLogger(config.logLevel).child({ role: 'history' }));
  lowerThisThreadsPriority(HISTORY_THREAD_NICENESS);
  return history;
});
