/**
 * The server side of the ingest benchmark, run as a child process so the
 * load generator does not share its event loop:
 *   node ingest-server.js gateway DIR DEVICES   the real gateway, durable SQLite store
 *   node ingest-server.js reference DIR DEVICES a server that only frames and acks
 * Prints one JSON line with the bound ports when ready.
 */
import { join } from 'node:path';
import { systemClock } from '../../core/clock.js';
import { registerDevice } from '../../core/commands/devices.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { silentLogger } from '../../core/logger.js';
import { protocols } from '../../gateway/protocols/index.js';
import { Gateway } from '../../gateway/server.js';
import { simulatedIdentity } from '../simulator/run.js';
import { BENCH_PROTOCOLS, BENCH_SEEDS } from './fleet.js';
import { startReferenceServer } from './reference-server.js';


/** Registers the simulated fleet the way the API does (claims, then the device), a few at a time. */
async function registerFleet(store: SqliteEventStore, perProtocol: number): Promise<void> {
  const pending: Array<() => Promise<unknown>> = [];
  for (const protocol of BENCH_PROTOCOLS) {
    for (let i = 0; i < perProtocol; i++) {
      const { imei, terminalId } = simulatedIdentity(BENCH_SEEDS[protocol], i);
      pending.push(() =>
        registerDevice(store, systemClock, {
          customer_id: 'cus_bench',
          imei,
          model: `bench-${protocol}`,
          terminal_id: protocol === 'jt808' ? terminalId : null,
        }),
      );
    }
  }
  while (pending.length > 0) await Promise.all(pending.splice(0, 200).map((register) => register()));
}

async function main(): Promise<void> {
  const [mode, dir, devices] = process.argv.slice(2);
  const perProtocol = Math.ceil(Number(devices) / BENCH_PROTOCOLS.length);
  if (mode === 'reference') {
    const ports = await startReferenceServer();
    process.stdout.write(JSON.stringify({ ports }) + '\n');
    return;
  }
  const store = new SqliteEventStore(join(dir!, 'events.sqlite'));
  await registerFleet(store, perProtocol);
  const gateway = new Gateway({
    store,
    clock: systemClock,
    log: silentLogger,
    host: '127.0.0.1',
    listeners: BENCH_PROTOCOLS.map((p) => ({ protocol: protocols[p], port: 0 })),
    offlineAfterS: 600,
    loginTimeoutS: 60,
    maxConnections: 100_000,
    maxConnectionsPerAddress: 100_000,
    maxQueuedFrames: 256,
  });
  const ports = await gateway.start();
  process.stdout.write(JSON.stringify({ ports }) + '\n');
  process.on('SIGTERM', () => {
    void gateway.stop().then(async () => {
      await store.close();
      process.stdout.write(JSON.stringify({ stats: gateway.stats }) + '\n');
      process.exit(0);
    });
  });
}

void main();
