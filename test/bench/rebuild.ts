/**
 * Read-model rebuild: a log of `events` fixes (a fleet of registered devices)
 * is written first; then the platform as users start it (`dist/main.js`,
 * roles projections and api) opens it with no read models and builds them
 * from scratch. Reported: events/s from the start of the process until
 * /readyz says the read models have caught up (startup included).
 *
 * The log is laid out as a fleet writes it: a thousand devices, each sending a
 * frame of several records every few seconds, so their fixes interleave in the
 * log; every record carries the ten IO elements the ingest bench's devices send,
 * as the Teltonika decoder names them. (A log written one device after another,
 * with no IO elements, made every device's rows contiguous and rebuilt about
 * twice as fast as a real log does.)
 *
 * The data dir is one the platform has started on before, as every data dir whose read
 * models are rebuilt is: it holds the demo customer that first start creates. Without it,
 * the timed start created one (a password hash, appends, and a wait for the read models
 * to take them in), which added 0.5-0.9 s that no rebuild of a running fleet pays.
 *
 * With `--store postgres`, the same rebuild runs a second time with the log on a PostgreSQL
 * server the bench starts (fsync on), beside the SQLite one of the same run.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultLogPath } from '../../core/config.js';
import { systemClock } from '../../core/clock.js';
import { createCustomer } from '../../core/commands/customers.js';
import { ensureDemoCustomer } from '../../core/demo-customer.js';
import { registerDevice } from '../../core/commands/devices.js';
import type { EventStore, EventToAppend } from '../../core/event-store/port.js';
import { openPostgresEventStore } from '../../core/event-store/postgres.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import type { PositionRecorded } from '../../core/events.js';
import { randomUuid } from '../../core/ids.js';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { platformEnv, startPlatformProcess } from '../support/platform-process.js';
import { procUsage, threadCpuByName, threadCpuLine } from './proc-usage.js';
import { benchNodeArgs } from './node-args.js';
import { postgresCpuS, startBenchPostgres, type PostgresStore } from './postgres-store.js';

const DEVICES = 1000;
/** Records per frame, a second apart; a device's frames are RECORDS_PER_FRAME seconds apart. */
const RECORDS_PER_FRAME = 5;
/** How long after the rebuild the platform's RSS is read again. */
const SETTLE_MS = 2_000;
/** Km/h at second `i`: between 40 and 60, changing by under a km/h a second. */
const speed = (i: number): number => Math.round(50 + 10 * Math.sin(i / 60));

/** Writes the log into `store` (and the demo customer's file into the data dir), then closes the store. */
async function writeLog(dataDir: string, store: EventStore, events: number): Promise<number> {
  await ensureDemoCustomer(dataDir, store);
  const { customer_id } = await createCustomer(store, systemClock, { name: 'Rebuild Bench', plan: 'enterprise' });
  const deviceIds: string[] = [];
  for (let d = 0; d < DEVICES; d++) {
    const { device_id } = await registerDevice(store, systemClock, { customer_id, imei: imeiFrom(`35209809${String(d).padStart(6, '0')}`), model: 'FMB920' });
    deviceIds.push(device_id);
  }
  const frames = Math.ceil(events / (DEVICES * RECORDS_PER_FRAME));
  const t0 = Date.now() - frames * RECORDS_PER_FRAME * 1000 - 3_600_000;
  let written = 0;
  for (let f = 0; f < frames; f++) {
    // One frame from every device, appended together as the gateway's group commit would.
    const appends = deviceIds.map((device_id, d) => {
      const batch: Array<EventToAppend<PositionRecorded>> = [];
      for (let r = 0; r < RECORDS_PER_FRAME; r++) {
        const i = f * RECORDS_PER_FRAME + r;
        const t = t0 + i * 1000 + d;
        batch.push({
          id: randomUuid(),
          type: 'PositionRecorded',
          data: {
            device_id, customer_id, protocol: 'teltonika', fix_time: t, received_at: t + 500, valid: true,
            // Cruising north at about 40 km/h: speed drifts slowly, the heading holds (no harsh manoeuvre for the detectors).
            lat: 56.9 + i * 0.0001, lng: 24.1 + d * 0.001, speed_kmh: speed(i), heading_deg: 0,
            altitude_m: 21, satellites: 11, ignition: true, odometer_m: i * 15,
            attributes: {
              priority: 0, event_io: 0, io239: 1, io240: 1, io21: 4, io69: 1, io66: 13_800, io67: 4_100, io24: speed(i), io181: 9,
              io16: i * 15, io199: 15,
            },
          },
        });
      }
      return store.appendToStream(streams.telemetry(device_id), batch);
    });
    await Promise.all(appends);
    written += DEVICES * RECORDS_PER_FRAME;
  }
  await store.close();
  return written;
}

export async function runRebuildBench(events = 500_000, store?: 'postgres'): Promise<void> {
  if (store !== 'postgres') {
    await rebuildOnce(events);
    return;
  }
  const pg = await startBenchPostgres('rebuild');
  try {
    const onSqlite = await rebuildOnce(events);
    const onPostgres = await rebuildOnce(events, pg);
    process.stdout.write(`  postgres vs sqlite (same run): ${Math.round((onPostgres / onSqlite) * 100)}% of events/s\n`);
  } finally {
    await pg.stop();
  }
}

/** One rebuild, its log on SQLite in the data dir or in a fresh database on `pg`; returns events/s. */
async function rebuildOnce(events: number, pg?: PostgresStore): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-rebuild-'));
  try {
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir, { recursive: true });
    const storeUrl = pg ? await pg.freshDatabase() : null;
    const store = storeUrl ? await openPostgresEventStore(storeUrl) : new SqliteEventStore(defaultLogPath(dataDir), { synchronous: 'OFF' });
    const written = await writeLog(dataDir, store, events);
    const { env, ports } = await platformEnv(dataDir, storeUrl ? { FLEET_STORE: storeUrl } : {});
    const pgBefore = pg ? postgresCpuS(pg) : 0;
    const started = performance.now();
    const nodeArgs = benchNodeArgs();
    // The banner comes after the rebuild: on a slow or busy machine that takes a while.
    const platform = await startPlatformProcess(env, ['--roles', 'projections,api'], nodeArgs, 600_000);
    let lag = Number.POSITIVE_INFINITY;
    while (lag > 0) {
      const res = await fetch(`http://127.0.0.1:${ports.http}/readyz`);
      const body = (await res.json()) as { checks?: { projections?: { lag_events?: number } } };
      lag = res.status === 200 ? (body.checks?.projections?.lag_events ?? 0) : Number.POSITIVE_INFINITY;
      if (lag > 0) await new Promise((r) => setTimeout(r, 200));
    }
    const seconds = (performance.now() - started) / 1000;
    // CPU time says what the wall clock cannot on a machine shared with other work.
    const { cpuS, peakRssMb } = procUsage(platform.child.pid!);
    const pgCpu = pg ? `  postgres server CPU ${(postgresCpuS(pg) - pgBefore).toFixed(1)} s over the rebuild\n` : '';
    const threads = threadCpuByName(platform.child.pid!);
    // What an idle platform keeps once the rebuild is over (no fixes arrive after it).
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const { rssMb: settledRssMb } = procUsage(platform.child.pid!);
    await platform.stop();
    process.stdout.write(
      `rebuild: ${written.toLocaleString('en-US')} fixes of ${DEVICES} devices, read models built from an empty start by dist/main.js --roles projections,api${pg ? ', log on PostgreSQL' : ''}\n` +
        `  ${Math.round(written / seconds).toLocaleString('en-US')} events/s (${seconds.toFixed(1)} s, process start included; target >= 100,000)\n` +
        `  platform process CPU ${cpuS.toFixed(1)} s (every thread): ${Math.round(written / cpuS).toLocaleString('en-US')} events per CPU second, peak RSS ${Math.round(peakRssMb)} MB, ${Math.round(settledRssMb)} MB ${SETTLE_MS / 1000} s after\n` +
        threadCpuLine(threads, written, 'event', 1, '  ') +
        pgCpu,
    );
    return written / seconds;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
