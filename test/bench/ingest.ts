/**
 * Durable ingest, measured on the platform as users start it. Four servers, same load,
 * same run, each in its own process:
 *
 *   reference          frames and acks with the gateway's protocol modules, stores nothing
 *   durable-reference  the same, acking each frame once its bytes are appended to a file
 *                      and an fdatasync covered them: the disk's floor for a durable ack
 *   gateway            `dist/main.js --roles gateway`: decode, append to SQLite (synchronous=FULL), ack
 *   platform           `dist/main.js` with every role (gateway, projections, API, webhooks), as
 *                      `npm start` runs it, with a webhook endpoint subscribed to device events
 *
 * With `--store postgres`, the gateway and the platform run a second time each on a PostgreSQL
 * server the bench starts (fsync on, as the durable reference; a fresh database per process).
 *
 * The load comes from codec8-client.ts in a process of its own (Teltonika Codec 8, 1 to
 * 10 records per frame with 10 IO elements each, every record unique). Closed loop: each
 * device sends its next frame when the previous one is acked. Open loop: a large fleet
 * sending one frame every few seconds each. Reported per server: acked records/s, ack
 * p50/p99, CPU seconds of server and client (the client must cost far less than the
 * server it loads, or the ratio measures the client), peak RSS, and for the platform the
 * projection lag when the load stops and the time until the read models caught up.
 */
import { fork, spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultLogPath } from '../../core/config.js';
import { systemClock } from '../../core/clock.js';
import { createCustomer } from '../../core/commands/customers.js';
import { registerDevice } from '../../core/commands/devices.js';
import type { EventStore } from '../../core/event-store/port.js';
import { openPostgresEventStore } from '../../core/event-store/postgres.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { historyDbPath } from '../../projections/history/database.js';
import { readModelsDbPath } from '../../projections/runner.js';
import { simulatedIdentity } from '../simulator/run.js';
import { platformEnv, startPlatformProcess } from '../support/platform-process.js';
import type { ClientConfig, ClientReport } from './codec8-client.js';
import { BENCH_SEEDS } from './fleet.js';
import { procUsage, threadCpuByName, threadCpuLine, threadCpuSpent } from './proc-usage.js';
import { benchNodeArgs } from './node-args.js';
import { logHeadOf, postgresCpuS, startBenchPostgres, type PostgresStore } from './postgres-store.js';

export const TARGETS = ['reference', 'durable-reference', 'gateway', 'platform'] as const;
export type Target = (typeof TARGETS)[number];

export interface IngestFigure {
  target: Target;
  report: ClientReport;
  serverCpuS: number;
  serverPeakRssMb: number;
  /** Gateway and platform: the server's CPU seconds per thread name over the load. */
  serverThreads?: Map<string, number>;
  /** Platform only: events the read models had not applied when the load stopped, and seconds until they had. */
  lagAtStop?: number;
  catchUpS?: number;
  /** On PostgreSQL: the server's CPU seconds (postmaster and backends) over the load. */
  postgresCpuS?: number;
}

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

function imeis(count: number): string[] {
  return Array.from({ length: count }, (_, i) => simulatedIdentity(BENCH_SEEDS.teltonika, i).imei);
}

/** A log that already holds a customer and the fleet's devices (what registration through the API appends); closes the store. */
async function prepareLog(store: EventStore, fleet: string[]): Promise<string> {
  const { api_key, customer_id } = await createCustomer(store, systemClock, { name: 'Ingest Bench', plan: 'enterprise' });
  const pending = fleet.map((imei) => () => registerDevice(store, systemClock, { customer_id, imei, model: 'FMB920' }));
  while (pending.length > 0) await Promise.all(pending.splice(0, 250).map((register) => register()));
  await store.close();
  return api_key;
}

/** A receiver for the platform's webhooks: counts deliveries, answers 204. */
async function startReceiver(): Promise<{ url: string; received: () => number; close: () => void }> {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received: () => received, close: () => server.close() };
}

/** The config goes in on stdin: 15,000 IMEIs are more than an argument list may hold (E2BIG). */
function runClient(config: ClientConfig): Promise<ClientReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [here('./codec8-client.js')], { stdio: ['pipe', 'pipe', 'inherit'] });
    child.stdin.end(JSON.stringify(config));
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code === 0 && line) resolve(JSON.parse(line) as ClientReport);
      else reject(new Error(`load client exited with ${code}: ${out}`));
    });
  });
}

/**
 * The log's head and how far the read models have applied it (the furthest behind of
 * the read models and the history, each with its own database), read from the files
 * (read-only, WAL): /readyz would answer only when the platform's main thread gets to
 * it, which is what a lagging projection delays.
 */
async function logProgress(dataDir: string, logHead: () => Promise<number>): Promise<{ head: number; applied: number }> {
  const head = await logHead();
  const applied = Math.min(...[readModelsDbPath(dataDir), historyDbPath(dataDir)].map(checkpointIn));
  return { head, applied };
}

function sqliteLogHead(dataDir: string): () => Promise<number> {
  return () => {
    const log = new Database(defaultLogPath(dataDir), { readonly: true });
    try {
      return Promise.resolve(log.prepare('SELECT coalesce(max(position), 0) FROM events').pluck().get() as number);
    } finally {
      log.close();
    }
  };
}

function checkpointIn(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    const checkpoint = db.prepare("SELECT position FROM checkpoints WHERE name = 'read-models'").pluck().get() as string | undefined;
    return checkpoint ? Number(checkpoint.split('/')[0]) : 0;
  } finally {
    db.close();
  }
}

/** Far beyond the 2 s target: what the bench waits for read models to catch up before it gives up. */
const CATCH_UP_LIMIT_MS = 120_000;

/** `pg`: the gateway or platform on that server (a fresh database), not on SQLite in its data dir. */
async function measure(target: Target, load: Omit<ClientConfig, 'host' | 'port'>, pg?: PostgresStore): Promise<IngestFigure> {
  const dir = mkdtempSync(join(tmpdir(), `fleet-bench-ingest-${target}-`));
  try {
    if (target === 'reference' || target === 'durable-reference') {
      const args = target === 'durable-reference' ? [join(dir, 'frames.log')] : [];
      const child = fork(here('./ingest-server.js'), args, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
      const port = await new Promise<number>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          const line = out.split('\n').find((l) => l.startsWith('{"ports"'));
          if (line) resolve((JSON.parse(line) as { ports: { teltonika: number } }).ports.teltonika);
        });
        child.once('exit', (code) => reject(new Error(`reference server exited with ${code}`)));
      });
      try {
        const before = procUsage(child.pid!);
        const report = await runClient({ ...load, host: '127.0.0.1', port });
        const after = procUsage(child.pid!);
        return { target, report, serverCpuS: after.cpuS - before.cpuS, serverPeakRssMb: after.peakRssMb };
      } finally {
        child.kill('SIGKILL');
      }
    }
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir, { recursive: true });
    const storeUrl = pg ? await pg.freshDatabase() : null;
    const apiKey = await prepareLog(storeUrl ? await openPostgresEventStore(storeUrl) : new SqliteEventStore(defaultLogPath(dataDir), { synchronous: 'OFF' }), load.imeis);
    const { env, ports } = await platformEnv(dataDir, {
      FLEET_MAX_CONNECTIONS_PER_ADDRESS: '100000', // every simulated device comes from 127.0.0.1
      FLEET_OFFLINE_AFTER_S: '600',
      ...(storeUrl ? { FLEET_STORE: storeUrl } : {}),
    });
    const logHead = storeUrl ? logHeadOf(storeUrl) : { head: sqliteLogHead(dataDir), close: () => Promise.resolve() };
    const nodeArgs = benchNodeArgs();
    const platform = await startPlatformProcess(env, target === 'gateway' ? ['--roles', 'gateway'] : [], nodeArgs);
    const receiver = target === 'platform' ? await startReceiver() : null;
    try {
      if (receiver) {
        const res = await fetch(`http://127.0.0.1:${ports.http}/v1/webhooks`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: receiver.url, events: ['device.*'], description: 'ingest bench' }),
        });
        if (res.status !== 201) throw new Error(`creating the bench webhook failed: ${res.status} ${await res.text()}`);
      }
      const pid = platform.child.pid!;
      const before = procUsage(pid);
      const threadsBefore = threadCpuByName(pid);
      const pgBefore = pg ? postgresCpuS(pg) : 0;
      const report = await runClient({ ...load, host: '127.0.0.1', port: ports.teltonika });
      const after = procUsage(pid);
      const figure: IngestFigure = {
        target,
        report,
        serverCpuS: after.cpuS - before.cpuS,
        serverPeakRssMb: after.peakRssMb,
        serverThreads: threadCpuSpent(threadsBefore, threadCpuByName(pid)),
        ...(pg ? { postgresCpuS: postgresCpuS(pg) - pgBefore } : {}),
      };
      if (target === 'platform') {
        const stoppedAt = performance.now();
        const atStop = await logProgress(dataDir, logHead.head);
        figure.lagAtStop = atStop.head - atStop.applied;
        // Bounded: read models that stopped following the log fail the bench with the platform's log, rather than hang it.
        while ((await logProgress(dataDir, logHead.head)).applied < atStop.head) {
          if (performance.now() - stoppedAt > CATCH_UP_LIMIT_MS) {
            throw new Error(`the read models did not catch up within ${CATCH_UP_LIMIT_MS / 1000} s of the load's end:\n${platform.output().slice(-4000)}`);
          }
          await new Promise((r) => setTimeout(r, 50));
        }
        figure.catchUpS = (performance.now() - stoppedAt) / 1000;
      }
      return figure;
    } finally {
      receiver?.close();
      await platform.stop();
      await logHead.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function line(f: IngestFigure, label: string): string {
  const r = f.report;
  const lag = f.lagAtStop !== undefined ? `   projection lag at stop ${fmt(f.lagAtStop)} events, caught up in ${f.catchUpS!.toFixed(2)} s` : '';
  return (
    `  ${label.padEnd(28)} ${fmt(r.recordsPerSecond).padStart(8)} acked records/s   ack p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms` +
    `   server cpu ${f.serverCpuS.toFixed(1)} s, peak rss ${fmt(f.serverPeakRssMb)} MB   client cpu ${r.cpuSeconds.toFixed(1)} s` +
    `   (${r.loggedIn}/${r.devices} logged in in ${r.loginSeconds.toFixed(1)} s, ${r.unacked} unacked, ${r.errors} errors)${lag}` +
    (f.postgresCpuS !== undefined ? `   postgres cpu ${f.postgresCpuS.toFixed(1)} s\n` : '\n') +
    (f.serverThreads ? threadCpuLine(f.serverThreads, r.records, 'record', 1, '    ') : '')
  );
}

/** The ack latencies of each second of the load: p99 (p50) in ms, eight seconds a line. */
function timeline(f: IngestFigure): string {
  const seconds = f.report.perSecond.map((s, i) => `${String(i + 1).padStart(3)}s ${s.p99.toFixed(1).padStart(6)} (${s.p50.toFixed(1)})`);
  const lines: string[] = [];
  for (let i = 0; i < seconds.length; i += 8) lines.push(`      ${seconds.slice(i, i + 8).join('  ')}\n`);
  return `    ack p99 (p50) per second, ms:\n${lines.join('')}`;
}

function ratios(f: IngestFigure, reference: IngestFigure, name = 'reference'): string {
  return `${Math.round((f.report.recordsPerSecond / reference.report.recordsPerSecond) * 100)}% of the ${name}'s records/s, ack p99 ${(f.report.p99 / reference.report.p99).toFixed(2)}x`;
}

/** Against the durable reference (no target: what the platform adds beyond the disk), when it ran. */
function durableRatios(f: IngestFigure, figures: Map<Target, IngestFigure>): string {
  const durable = figures.get('durable-reference');
  return durable ? `; ${ratios(f, durable, 'durable reference')}` : '';
}

export interface IngestBenchOptions {
  devices: number;
  seconds: number;
  rounds: number;
  /** The open-loop fleet: devices, seconds between frames, seconds of load. 0 devices: no open-loop run. */
  openDevices: number;
  openIntervalS: number;
  openSeconds: number;
  /** The servers to run, in this order (all four by default), in the closed and the open loop: for comparing builds, say. */
  only?: readonly Target[];
  /** Print each server's ack latencies per second of the load too (where in a run its tail is). */
  timeline?: boolean;
  /** 'postgres': the gateway and the platform run again on a PostgreSQL server, after the others. */
  store?: 'postgres';
}

/** Measures each target in turn under the same load, printing each figure (and its timeline) as it comes. */
async function measureEach(
  targets: readonly Target[],
  load: Omit<ClientConfig, 'host' | 'port'>,
  labelSuffix: string,
  withTimeline = false,
  pg?: PostgresStore,
): Promise<Map<Target, IngestFigure>> {
  const figures = new Map<Target, IngestFigure>();
  for (const target of targets) {
    const f = await measure(target, load, pg);
    figures.set(target, f);
    process.stdout.write(line(f, `${target}${pg ? '/postgres' : ''}${labelSuffix}`));
    if (withTimeline) process.stdout.write(timeline(f));
  }
  return figures;
}

/**
 * The gateway and the platform on PostgreSQL, measured after the SQLite ones of the same round:
 * their ratios to the references, and to the same role on SQLite.
 */
async function measureOnPostgres(
  targets: readonly Target[],
  load: Omit<ClientConfig, 'host' | 'port'>,
  labelSuffix: string,
  sqlite: Map<Target, IngestFigure>,
  o: IngestBenchOptions,
  pg: PostgresStore,
): Promise<IngestFigure[]> {
  const figures = await measureEach(targets.filter((t) => t === 'gateway' || t === 'platform'), load, labelSuffix, o.timeline, pg);
  const reference = sqlite.get('reference');
  const durable = sqlite.get('durable-reference');
  for (const [target, f] of figures) {
    const name = target === 'platform' ? 'all roles' : 'gateway role';
    const parts = [reference ? ratios(f, reference) : '', durable ? ratios(f, durable, 'durable reference') : ''].filter(Boolean);
    if (target === 'platform') parts.push(`caught up in ${f.catchUpS!.toFixed(2)} s`);
    process.stdout.write(`    ${target}/postgres: ${parts.join('; ')}\n`);
    const onSqlite = sqlite.get(target);
    if (onSqlite) {
      process.stdout.write(
        `    postgres ${name} vs sqlite ${name} (same run): ${Math.round((f.report.recordsPerSecond / onSqlite.report.recordsPerSecond) * 100)}% of acked records/s` +
          (durable ? `; ack p99 vs durable reference: ${(f.report.p99 / durable.report.p99).toFixed(2)}x (sqlite ${(onSqlite.report.p99 / durable.report.p99).toFixed(2)}x)` : '') +
          '\n',
      );
    }
  }
  return [...figures.values()];
}

export async function runIngestBench(o: IngestBenchOptions): Promise<IngestFigure[]> {
  // One server for the whole run, fsync on; each platform process gets a database of its own.
  const pg = o.store === 'postgres' ? await startBenchPostgres('ingest') : undefined;
  try {
    return await runIngestRounds(o, pg);
  } finally {
    await pg?.stop();
  }
}

async function runIngestRounds(o: IngestBenchOptions, pg: PostgresStore | undefined): Promise<IngestFigure[]> {
  const out: IngestFigure[] = [];
  const closed = { imeis: imeis(o.devices), mode: 'closed' as const, intervalMs: 0, durationS: o.seconds, connectConcurrency: 200 };
  process.stdout.write(
    `ingest, closed loop: ${o.devices} Teltonika devices, 1-10 records per frame (10 IO elements each), ${o.rounds} round(s) of ${o.seconds} s per server\n`,
  );
  const targets = o.only ?? TARGETS;
  for (let round = 1; round <= o.rounds; round++) {
    // Rounds alternate the servers, so a slow spell of the machine does not land on one of them only.
    const figures = await measureEach(targets, closed, ` (round ${round})`, o.timeline);
    out.push(...figures.values());
    const reference = figures.get('reference');
    const gateway = figures.get('gateway');
    const platform = figures.get('platform');
    // The ratios need the reference of the same round; the platform's own targets do not.
    if (gateway && reference) process.stdout.write(`    gateway:  ${ratios(gateway, reference)} (targets >= 50%, <= 2x)${durableRatios(gateway, figures)}\n`);
    if (platform) {
      process.stdout.write(
        `    platform: ${fmt(platform.report.recordsPerSecond)} records/s (target >= 30,000), ` +
          (reference ? `${ratios(platform, reference)} (target p99 <= 3x), ` : '') +
          `caught up in ${platform.catchUpS!.toFixed(2)} s (target <= 2 s)${durableRatios(platform, figures)}\n`,
      );
    }
    if (pg) out.push(...(await measureOnPostgres(targets, closed, ` (round ${round})`, figures, o, pg)));
  }
  if (o.openDevices > 0) {
    const open = { imeis: imeis(o.openDevices), mode: 'open' as const, intervalMs: o.openIntervalS * 1000, durationS: o.openSeconds, connectConcurrency: 500 };
    process.stdout.write(`ingest, open loop: ${o.openDevices} devices, one frame every ${o.openIntervalS} s each, ${o.openSeconds} s\n`);
    const figures = await measureEach(targets, open, '', o.timeline);
    out.push(...figures.values());
    const reference = figures.get('reference');
    const gateway = figures.get('gateway');
    const platform = figures.get('platform');
    // No target for the gateway alone: the ack path's tail apart from what the other roles add to it.
    if (gateway && reference) process.stdout.write(`    gateway:  ${ratios(gateway, reference)} (no target: the ack path alone)${durableRatios(gateway, figures)}\n`);
    if (platform) {
      process.stdout.write(
        `    platform: ` +
          (reference ? `${ratios(platform, reference)} (target p99 <= 1.2x), ` : '') +
          `peak rss ${fmt(platform.serverPeakRssMb)} MB (target < 1024)${durableRatios(platform, figures)}\n`,
      );
    }
    if (pg) out.push(...(await measureOnPostgres(targets, open, '', figures, o, pg)));
  }
  return out;
}
