/**
 * Worker thread entry: the gateway with its own event loop and its own handle on the
 * store (thread.ts starts it). Sockets, decoding, appends and acks never wait behind the
 * projections, the API or webhook delivery that share the process. Its counters reach
 * the host as a snapshot every second, for /metrics.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { countAppends } from '../core/event-store/counting.js';
import { openEventStore } from '../core/event-store/open.js';
import { createLogger } from '../core/logger.js';
import { nameThisThread } from '../core/thread-name.js';
import { gatewayFromConfig } from './from-config.js';
import type { FromGatewayThread, GatewaySnapshot, ToGatewayThread } from './thread-messages.js';

const SNAPSHOT_INTERVAL_MS = 1_000;

nameThisThread('gateway');

async function main(): Promise<void> {
  const config = workerData as Config;
  const log = createLogger(config.logLevel).child({ role: 'gateway' });
  const { store, counts } = countAppends(await openEventStore(config.store, systemClock));
  const gateway = gatewayFromConfig(config, store, systemClock, log);
  const post = (m: FromGatewayThread) => parentPort!.postMessage(m);
  const snapshot = (): GatewaySnapshot => ({ stats: gateway.stats, openConnections: gateway.openConnections, appends: counts });
  post({ type: 'started', ports: await gateway.start() });
  const timer = setInterval(() => post({ type: 'snapshot', ...snapshot() }), SNAPSHOT_INTERVAL_MS);
  parentPort!.on('message', (m: ToGatewayThread) => {
    if (m.type !== 'stop') return;
    clearInterval(timer);
    void (async () => {
      await gateway.stop();
      await store.close();
      post({ type: 'stopped', ...snapshot() });
      parentPort!.close();
    })();
  });
}

// A failure to start (a port in use, the store) reaches the host as the worker's error.
main().catch((err: unknown) => {
  throw err;
});
