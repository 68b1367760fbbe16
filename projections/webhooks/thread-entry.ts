/**
 * Worker thread entry: webhook delivery (projector, dispatcher, replays) with its own
 * event loop, its own handle on the store and its own connection to the delivery
 * database (thread.ts starts it). Signing, HTTP attempts and queue writes no longer
 * share a thread with the read models and the API.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../../core/clock.js';
import type { Config } from '../../core/config.js';
import { openEventStore } from '../../core/event-store/open.js';
import { positionFromString } from '../../core/event-store/port.js';
import { createLogger } from '../../core/logger.js';
import { SecretBox } from '../../core/secret-box.js';
import { webhookDeliveryFromConfig } from './from-config.js';
import type { FromWebhookThread, ToWebhookThread } from './thread-messages.js';

async function main(): Promise<void> {
  const config = workerData as Config;
  const log = createLogger(config.logLevel).child({ role: 'webhooks' });
  const store = await openEventStore(config.store, systemClock);
  const delivery = webhookDeliveryFromConfig(config, store, systemClock, log, SecretBox.load(config.secretKey));
  await delivery.start();
  const post = (m: FromWebhookThread) => parentPort!.postMessage(m);
  post({ type: 'started' });
  parentPort!.on('message', (m: ToWebhookThread) => {
    if (m.type === 'stop') {
      void (async () => {
        await delivery.stop();
        await store.close();
        parentPort!.close();
      })();
      return;
    }
    const work = m.type === 'catchUp' ? delivery.catchUp() : delivery.waitFor(positionFromString(m.position));
    work.then(
      () => post({ type: 'answer', id: m.id, error: null }),
      (err: unknown) => post({ type: 'answer', id: m.id, error: err instanceof Error ? err.message : String(err) }),
    );
  });
}

// A failure to start reaches the host as the worker's error.
main().catch((err: unknown) => {
  throw err;
});
