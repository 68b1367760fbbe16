/**
 * The server side of the API benchmark, run as a child process so the load client
 * does not share its event loop. Seeds a fleet straight into the store, lets
 * the projections catch up, then serves (1) the real API and (2) a bare
 * Fastify app whose static routes answer with bodies of the same sizes.
 * Prints one JSON line with the ports, the API key and the body sizes.
 */
import Fastify from 'fastify';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../api/app.js';
import { runnerView } from '../../projections/view.js';
import { systemClock } from '../../core/clock.js';
import type { EventToAppend } from '../../core/event-store/port.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { newId, randomUuid } from '../../core/ids.js';
import { imeiFrom } from '../../core/imei.js';
import { silentLogger } from '../../core/logger.js';
import { SecretBox } from '../../core/secret-box.js';
import { streams } from '../../core/streams.js';
import { createCustomer, setCustomerRateLimit } from '../../core/commands/customers.js';
import { historyItemJson } from '../../api/history-item.js';
import { ProjectionRunner, historyDbPath, openHistoryReads, openReadModelDb, readModelProjections, startHistory } from '../../projections/index.js';

export interface ApiBenchTargets {
  api: number;
  reference: number;
  apiKey: string;
  historyDevice: string;
  historyFrom: string;
  /** Paths benchmarked, each with the size of its body (the static twin returns as many bytes) and its issue's target. */
  paths: Array<{ name: string; path: string; bytes: number; staticPath: string; target: { ratio: number; p99Ms: number } }>;
}

const T0 = Date.UTC(2026, 10, 1);

async function seed(store: SqliteEventStore, customerId: string, devices: number, historyFixes: number): Promise<string[]> {
  const ids: string[] = [];
  const appends: Array<Promise<unknown>> = [];
  for (let i = 0; i < devices; i++) {
    const deviceId = newId('dev', T0 + i);
    ids.push(deviceId);
    appends.push(
      store.appendToStream(streams.device(deviceId), [
        {
          id: randomUuid(),
          type: 'DeviceRegistered',
          data: {
            device_id: deviceId, customer_id: customerId, imei: imeiFrom(String(35000000000000 + i)), model: 'FMB920',
            name: `Truck ${i}`, group_id: null, driver_id: null, terminal_id: null, created_at: T0,
          },
        },
      ]),
    );
    appends.push(store.appendToStream(streams.telemetry(deviceId), [fix(deviceId, customerId, T0 + 60_000, i)]));
  }
  await Promise.all(appends);
  // One device with a long history for the history endpoint.
  const history: EventToAppend[] = [];
  for (let k = 0; k < historyFixes; k++) history.push(fix(ids[0]!, customerId, T0 + k * 10_000, k));
  for (let k = 0; k < history.length; k += 1000) await store.appendToStream(streams.telemetry(ids[0]!), history.slice(k, k + 1000));
  return ids;
}

function fix(deviceId: string, customerId: string, t: number, n: number): EventToAppend {
  return {
    id: randomUuid(),
    type: 'PositionRecorded',
    data: {
      device_id: deviceId, customer_id: customerId, protocol: 'teltonika', fix_time: t, received_at: t + 500, valid: true,
      lat: 56.9 + (n % 1000) / 10_000, lng: 24.1 + (n % 997) / 10_000, speed_kmh: n % 120, heading_deg: n % 360, altitude_m: 12,
      satellites: 11, ignition: true, odometer_m: n * 100, attributes: { io66: 12800 },
    },
  };
}

async function main(): Promise<void> {
  const devices = Number(process.argv[2] ?? '10000');
  const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-api-'));
  const store = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'OFF' });
  const customer = await createCustomer(store, systemClock, { name: 'Bench Fleet', plan: 'enterprise' });
  // The bench measures the API, not the plan's limit: the limiter still runs, with an agreed budget the load cannot exhaust.
  await setCustomerRateLimit(store, systemClock, customer.customer_id, { per_minute: 1e12, burst: 1e12 });
  const ids = await seed(store, customer.customer_id, devices, 20_000);
  const db = openReadModelDb(join(dir, 'readmodels.sqlite'));
  const runner = new ProjectionRunner(store, db, readModelProjections(), silentLogger);
  await runner.start();
  const history = await startHistory(store, historyDbPath(dir), historyItemJson, silentLogger);
  const historyReads = openHistoryReads(historyDbPath(dir));
  const app = await buildApp(
    {
      store,
      clock: systemClock,
      readModelDb: db,
      historyDbPath: historyDbPath(dir),
      secretBox: SecretBox.fromKey(randomBytes(32)),
      waitFor: (p) => runner.waitFor(p),
      catchUp: () => runner.catchUp(),
      projections: runnerView(runner, historyReads, store, systemClock),
    },
    silentLogger,
  );
  await app.listen({ host: '127.0.0.1', port: 0 });

  const auth = { authorization: `Bearer ${customer.api_key}` };
  const historyFrom = new Date(T0).toISOString();
  const measured = [
    // The issues' targets: latest positions at 50% of the static route's req/s with p99 < 20 ms; history (issue 13) at 30%, p99 < 10 ms.
    { name: 'latest positions (page of 50)', path: '/v1/positions/latest', target: { ratio: 0.5, p99Ms: 20 } },
    { name: 'latest positions (page of 1000)', path: '/v1/positions/latest?limit=1000', target: { ratio: 0.5, p99Ms: 20 } },
    { name: 'position history (page of 100)', path: `/v1/positions?device_id=${ids[0]}&from=${historyFrom}&limit=100`, target: { ratio: 0.3, p99Ms: 10 } },
  ];
  const reference = Fastify({ logger: false });
  const paths: ApiBenchTargets['paths'] = [];
  for (const [i, m] of measured.entries()) {
    const res = await app.inject({ method: 'GET', url: m.path, headers: auth });
    if (res.statusCode !== 200) throw new Error(`${m.path}: ${res.statusCode} ${res.body}`);
    const body = res.body;
    const staticPath = `/static/${i}`;
    // Prebuilt bytes: the fastest a route can answer with this body.
    const bytes = Buffer.from(body);
    reference.get(staticPath, (_req, reply) => reply.type('application/json; charset=utf-8').send(bytes));
    paths.push({ ...m, bytes: Buffer.byteLength(body), staticPath });
  }
  await reference.listen({ host: '127.0.0.1', port: 0 });
  const portOf = (s: typeof app.server) => {
    const a = s.address();
    return typeof a === 'object' && a ? a.port : 0;
  };
  const targets: ApiBenchTargets = {
    api: portOf(app.server),
    reference: portOf(reference.server),
    apiKey: customer.api_key,
    historyDevice: ids[0]!,
    historyFrom,
    paths,
  };
  process.stdout.write(JSON.stringify({ targets }) + '\n');
  process.on('SIGTERM', () => {
    void (async () => {
      await app.close();
      await reference.close();
      await runner.stop();
      await history.stop();
      historyReads.close();
      await store.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    })();
  });
}

void main();
