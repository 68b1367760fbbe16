/**
 * Worker thread entry: the position history's runner with its own event loop, its own
 * handle on the store and its own database (thread.ts starts it).
 */
import { workerData } from 'node:worker_threads';
import { createLogger } from '../../core/logger.js';
import { runRunnerThread } from '../runner-thread.js';
import { historyDbPath, startHistory } from './database.js';
import type { HistoryItemEncoder } from './index.js';
import type { HistoryThreadData } from './thread.js';

const { config, encoder } = workerData as HistoryThreadData;
runRunnerThread(config.store, async (store) => {
  const encodeItem = ((await import(encoder.url)) as Record<string, HistoryItemEncoder>)[encoder.exportName];
  if (typeof encodeItem !== 'function') throw new Error(`${encoder.url} has no function ${encoder.exportName}`);
  return startHistory(store, historyDbPath(config.dataDir), encodeItem, createLogger(config.logLevel).child({ role: 'history' }));
});
