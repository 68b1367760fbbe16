/**
 * The server side of the API benchmark, run as a child process so the load client
 * does not share its event loop. Seeds a fleet straight into a store, starts the
 * platform on it as users do (`dist/main.js`, every role, in a process of its own),
 * and serves a bare Fastify app whose static routes answer with the bodies the
 * platform gave, byte for byte. Prints one JSON line with the ports, the platform's
 * process id, the API key and the body sizes.
 */
import Fastify from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultLogPath } from '../../core/config.js';
import { systemClock } from '../../core/clock.js';
import type { EventToAppend } from '../../core/event-store/port.js';
import type { PositionRecorded } from '../../core/events.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { newId, randomUuid } from '../../core/ids.js';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { createCustomer, setCustomerRateLimit } from '../../core/commands/customers.js';
import { platformEnv, startPlatformProcess } from '../support/platform-process.js';
import { benchNodeArgs } from './node-args.js';
import { PlannedRoute, type Leg } from '../simulator/planned-route.js';

export interface ApiBenchTargets {
  /** The platform's HTTP port, and its process (for its CPU time). */
  api: number;
  apiPid: number;
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

/** A working day per vehicle (three trips, an idle, stops) for the trips and their export. */
const TRIP_DAY: Leg[] = [
  { park_s: 600 },
  { drive_km: 12, speed_kmh: 60, heading_deg: 20 },
  { idle_s: 300 },
  { drive_km: 6, speed_kmh: 40, heading_deg: 110 },
  { park_s: 1800 },
  { drive_km: 15, speed_kmh: 70, heading_deg: 200 },
  { park_s: 3600 },
  { drive_km: 20, speed_kmh: 80, heading_deg: 300 },
  { park_s: 900 },
];
const TRIP_VEHICLES = 200;

/** Planned days for the first TRIP_VEHICLES devices, a fix every 10 s, the day after the history device's fixes. */
async function seedTrips(store: SqliteEventStore, customerId: string, ids: string[]): Promise<void> {
  for (const [i, deviceId] of ids.slice(1, 1 + TRIP_VEHICLES).entries()) {
    const plan = new PlannedRoute({ startLat: 56.5 + i * 0.01, startLng: 24.1, startTime: T0 + 5 * 86_400_000, intervalS: 10, legs: TRIP_DAY });
    const events = plan.points.map((p) =>
      fix(deviceId, customerId, p.fixTime, i, { lat: p.lat, lng: p.lng, speed_kmh: p.speedKmh, ignition: p.ignition, odometer_m: p.odometerM }),
    );
    for (let k = 0; k < events.length; k += 1000) await store.appendToStream(streams.telemetry(deviceId), events.slice(k, k + 1000));
  }
}

function fix(deviceId: string, customerId: string, t: number, n: number, planned: Partial<PositionRecorded['data']> = {}): EventToAppend {
  return {
    id: randomUuid(),
    type: 'PositionRecorded',
    data: {
      device_id: deviceId, customer_id: customerId, protocol: 'teltonika', fix_time: t, received_at: t + 500, valid: true,
      lat: 56.9 + (n % 1000) / 10_000, lng: 24.1 + (n % 997) / 10_000, speed_kmh: n % 120, heading_deg: n % 360, altitude_m: 12,
      satellites: 11, ignition: true, odometer_m: n * 100, attributes: { io66: 12800 }, ...planned,
    },
  };
}

async function main(): Promise<void> {
  const devices = Number(process.argv[2] ?? '10000');
  const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-api-'));
  const dataDir = join(dir, 'data');
  const store = new SqliteEventStore(defaultLogPath(dataDir), { synchronous: 'OFF' });
  const customer = await createCustomer(store, systemClock, { name: 'Bench Fleet', plan: 'enterprise' });
  // The bench measures the API, not the plan's limit: the limiter still runs, with an agreed budget the load cannot exhaust.
  await setCustomerRateLimit(store, systemClock, customer.customer_id, { per_minute: 1e12, burst: 1e12 });
  const ids = await seed(store, customer.customer_id, devices, 20_000);
  await seedTrips(store, customer.customer_id, ids);
  await store.close();
  // The platform as `npm start` runs it (every role): its banner comes once the read models and the history have caught up.
  const { env, ports } = await platformEnv(dataDir);
  const nodeArgs = benchNodeArgs();
  const platform = await startPlatformProcess(env, [], nodeArgs);

  const auth = { authorization: `Bearer ${customer.api_key}` };
  const historyFrom = new Date(T0).toISOString();
  const historyTo = new Date(T0 + 30 * 86_400_000).toISOString();
  const measured = [
    // The issues' targets: latest positions at 50% of the static route's req/s with p99 < 20 ms; history (issue 13) at 30%, p99 < 10 ms.
    { name: 'latest positions (page of 50)', path: '/v1/positions/latest', target: { ratio: 0.5, p99Ms: 20 } },
    { name: 'latest positions (page of 1000)', path: '/v1/positions/latest?limit=1000', target: { ratio: 0.5, p99Ms: 20 } },
    // An explicit end: the seeded month is fixed, and a `to` defaulting to now leaves the 31-day window once it is past.
    { name: 'position history (page of 100)', path: `/v1/positions?device_id=${ids[0]}&from=${historyFrom}&to=${historyTo}&limit=100`, target: { ratio: 0.3, p99Ms: 10 } },
    // Issue 56: lists are read like the history; an export streams a whole window (its target is ours, set to what a page costs per row).
    { name: 'trips (page of 50)', path: '/v1/trips?limit=50', target: { ratio: 0.3, p99Ms: 20 } },
    { name: 'trips export (CSV, every trip)', path: '/v1/trips?format=csv', target: { ratio: 0.1, p99Ms: 100 } },
    {
      name: 'positions export (CSV, a day of 8,640 fixes)',
      path: `/v1/positions?device_id=${ids[0]}&from=${historyFrom}&to=${new Date(T0 + 86_400_000).toISOString()}&format=csv`,
      target: { ratio: 0.1, p99Ms: 200 },
    },
  ];
  const reference = Fastify({ logger: false });
  const paths: ApiBenchTargets['paths'] = [];
  for (const [i, m] of measured.entries()) {
    const res = await fetch(`http://127.0.0.1:${ports.http}${m.path}`, { headers: auth });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${m.path}: ${res.status} ${body}`);
    const staticPath = `/static/${i}`;
    // Prebuilt bytes: the fastest a route can answer with this body.
    const bytes = Buffer.from(body);
    reference.get(staticPath, (_req, reply) => reply.type('application/json; charset=utf-8').send(bytes));
    paths.push({ ...m, bytes: Buffer.byteLength(body), staticPath });
  }
  await reference.listen({ host: '127.0.0.1', port: 0 });
  const address = reference.server.address();
  const targets: ApiBenchTargets = {
    api: ports.http,
    apiPid: platform.child.pid!,
    reference: typeof address === 'object' && address ? address.port : 0,
    apiKey: customer.api_key,
    historyDevice: ids[0]!,
    historyFrom,
    paths,
  };
  process.stdout.write(JSON.stringify({ targets }) + '\n');
  process.on('SIGTERM', () => {
    void (async () => {
      await reference.close();
      await platform.stop();
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    })();
  });
}

void main();
