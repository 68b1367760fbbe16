/**
 * Worker thread entry: webhook delivery (projector, dispatcher, replays) with its own
 * event loop, its own handle on the store and its own connection to the delivery
 * database (thread.ts starts it). Signing, HTTP attempts and queue writes no longer
 * share a thread with the read models and the API.
 */
import { workerData } from 'node:worker_threads';
import { systemClock } from '../../core/clock.js';
import type { Config } from '../../core/config.js';
import { openEventStore } from '../../core/event-store/open.js';
import { createLogger } from '../../core/logger.js';
import { SecretBox } from '../../core/secret-box.js';
import { serveRunnerThread } from '../runner-thread.js';
import { webhookDeliveryFromConfig } from './from-config.js';

async function main(): Promise<void> {
  const config = workerData as Config;
  const log = createLogger(config.logLevel).child({ role: 'webhooks' });
  const store = await openEventStore(config.store, systemClock);
  const delivery = webhookDeliveryFromConfig(config, store, systemClock, log, SecretBox.load(config.secretKey));
  await delivery.start();
  serveRunnerThread({
    catchUp: () => delivery.catchUp(),
    waitFor: (p) => delivery.waitFor(p),
    async stop() {
      await delivery.stop();
      await store.close();
    },
  });
}

// A failure to start reaches the host as the worker's error.
main().catch((err: unknown) => {
  throw err;
});
