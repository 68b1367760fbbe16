/**
 * Worker thread entry: webhook delivery (projector, dispatcher, replays) with its own
 * event loop, its own handle on the store and its own connection to the delivery
 * database (thread.ts starts it). Signing, HTTP attempts and queue writes no longer
 * share a thread with the read models and the API.
 */
import { workerData } from 'node:worker_threads';
import { systemClock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import { SecretBox } from '../core/secret-box.js';
import { nameThisThread } from '../core/thread-name.js';
import { runRunnerThread } from '../core/runner-thread.js';
import { webhookDeliveryFromConfig } from './from-config.js';

nameThisThread('webhooks');
const config = workerData as Config;
runRunnerThread(config.store, async (store) => {
  const log = createLogger(config.logLevel).child({ role: 'webhooks' });
  const delivery = await webhookDeliveryFromConfig(config, store, systemClock, log, SecretBox.load(config.secretKey));
  await delivery.start();
  return delivery;
});
