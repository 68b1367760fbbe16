/**
 * Worker thread entry: the position history's runner with its own event loop, its own
 * handle on the store and its own database (thread.ts starts it).
 */
import { workerData } from 'node:worker_threads';
import { systemClock } from '../../core/clock.js';
import { openEventStore } from '../../core/event-store/open.js';
import { createLogger } from '../../core/logger.js';
import { serveRunnerThread } from '../runner-thread.js';
import { historyDbPath, startHistory } from './database.js';
import type { HistoryItemEncoder } from './index.js';
import type { HistoryThreadData } from './thread.js';

async function main(): Promise<void> {
  const { config, encoder } = workerData as HistoryThreadData;
  const log = createLogger(config.logLevel).child({ role: 'history' });
  const encodeItem = ((await import(encoder.url)) as Record<string, HistoryItemEncoder>)[encoder.exportName];
  if (typeof encodeItem !== 'function') throw new Error(`${encoder.url} has no function ${encoder.exportName}`);
  const store = await openEventStore(config.store, systemClock);
  const history = await startHistory(store, historyDbPath(config.dataDir), encodeItem, log);
  serveRunnerThread({
    catchUp: () => history.catchUp(),
    waitFor: (p) => history.waitFor(p),
    async stop() {
      await history.stop();
      await store.close();
    },
  });
}

// A failure to start reaches the host as the worker's error.
main().catch((err: unknown) => {
  throw err;
});
