/**
 * Webhook delivery: the platform as users start it (`node dist/main.js`, its
 * own process, SQLite data dir in a temp dir), Pro customers each with a fleet
 * (protocols in turn, real frames over TCP from this process, JT/T 808
 * registering and authenticating; every unit sends a frame per send period,
 * Teltonika and JT/T 808 with several fixes, GT06 with one) and one endpoint
 * subscribed to `position.updated`, pointing at a receiver in another process.
 *
 *   reference   a bare keep-alive client process posting signed requests to the
 *               receiver as fast as it can: what the receiver and machine take
 *   latency     about half of each customer's limit: event-to-delivery p50/p99
 *               (receive time minus the fix time, which the load client sets to
 *               the moment it sends the frame), and each customer's rate
 *   throughput  every customer offered its whole limit (`--overload 1`, the
 *               default; more to see a growing backlog): deliveries/s at the
 *               receiver over the steady part of the window. Load above the
 *               limits cannot be delivered within them whatever the platform
 *               does; it only adds ingest and queueing work for later.
 *
 * A warm-up at the latency phase's rate comes first, not counted. Between phases
 * the queue drains; at the end the delivery database says how
 * many deliveries are still queued, beside what the receiver counted.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { ProtocolName } from '../../gateway/protocol.js';
import { deliveryDbPath } from '../../webhook-delivery/from-config.js';
import { platformEnv, startPlatformProcess, type PlatformProcess } from '../support/platform-process.js';
import { SimulatedDevice } from '../simulator/device.js';
import { Route, type RouteOptions } from '../simulator/route.js';
import { encoders, registerDevices, simulatedIdentity, sleep, type SimulatedDeviceInfo } from '../simulator/run.js';
import type { SimPoint } from '../simulator/encoders/types.js';
import { BENCH_PROTOCOLS, BENCH_SEEDS } from './fleet.js';
import { procUsage } from './proc-usage.js';
import type { ReceiverCommand, ReceiverStats } from './webhooks-receiver.js';
import { benchNodeArgs } from './node-args.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const PRO_PER_S = 100;

export interface WebhookBenchOptions {
  customers: number;
  devicesPerCustomer: number;
  seconds: number;
  pointsPerFrame: number;
  /** Offered load of the throughput phase, as a multiple of each customer's limit (1: each at its limit). */
  overload: number;
}

/**
 * Fixes dated the moment their frame is built, as a unit that sends what it just
 * recorded: the payload's position.timestamp is the send time. A frame of k fixes
 * is built by k calls in a row; they are dated 1 ms apart, the last one now, so
 * every fix is distinct and none is later than the send.
 */
class LiveRoute extends Route {
  private built = 0;

  constructor(
    options: RouteOptions,
    private readonly pointsPerFrame: number,
  ) {
    super(options);
  }

  override next(): SimPoint {
    const indexInFrame = this.built++ % this.pointsPerFrame;
    return { ...super.next(), fixTime: Date.now() - (this.pointsPerFrame - 1 - indexInFrame) };
  }
}

interface BenchDevice {
  customer: number;
  protocol: ProtocolName;
  info: SimulatedDeviceInfo;
}

interface Receiver {
  child: ChildProcess;
  port: number;
  ask(m: ReceiverCommand): Promise<ReceiverStats>;
}

async function startReceiver(): Promise<Receiver> {
  const child = fork(here('./webhooks-receiver.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`receiver exited with ${code}`)));
  });
  const ask = (m: ReceiverCommand) =>
    new Promise<ReceiverStats>((resolve) => {
      const onMessage = (r: { reply?: string; stats: ReceiverStats }) => {
        if (r.reply !== m.cmd) return;
        child.off('message', onMessage);
        resolve(r.stats);
      };
      child.on('message', onMessage);
      child.send(m);
    });
  return { child, port, ask };
}

/** The bare client: deliveries/s the receiver takes from a process that only posts. */
async function referenceRun(url: string, seconds: number, bodyBytes: number): Promise<{ perS: number; cpuS: number }> {
  const child = fork(here('./webhooks-reference-client.js'), [url, String(seconds), '64', String(bodyBytes)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const r = await new Promise<{ sent: number; seconds: number; cpu: { user: number; system: number } }>((resolve) => child.once('message', resolve));
  await new Promise((r2) => child.once('exit', r2));
  return { perS: r.sent / r.seconds, cpuS: (r.cpu.user + r.cpu.system) / 1e6 };
}

async function http<T>(base: string, apiKey: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** One simulated unit per bench device, kept across the phases (connections and JT/T 808 auth codes stay, as on a real fleet). */
function simulate(devices: BenchDevice[], port: Record<ProtocolName, number>, pointsPerFrame: number, onAck: (points: number) => void): SimulatedDevice[] {
  return devices.map((d) => {
    const encoder = encoders[d.protocol];
    const perFrame = Math.min(pointsPerFrame, encoder.maxPointsPerFrame);
    return new SimulatedDevice({
      host: '127.0.0.1',
      port: port[d.protocol],
      encoder,
      ctx: { imei: d.info.imei, terminalId: d.info.terminalId },
      route: new LiveRoute({ seed: d.info.index + 1, startLat: 56.95, startLng: 24.1, startTime: Date.now(), harshBrakeChance: 0 }, perFrame),
      pointsPerFrame: perFrame,
      ackTimeoutMs: 30_000,
      onAck: (acked) => onAck(acked.length),
    });
  });
}

/**
 * Every device sends a frame every interval, as units on a fixed send period do: a GT06 frame
 * carries one fix, a Teltonika or JT/T 808 frame up to `pointsPerFrame`. The interval is set so
 * that the fleet offers `totalPerS` fixes a second. Sends follow the schedule (not the ack plus a
 * pause), so the offered rate holds while acks are slow; a device behind schedule sends at once.
 */
async function drive(
  sims: SimulatedDevice[],
  acked: () => number,
  pointsPerFrame: number[],
  totalPerS: number,
  seconds: number,
): Promise<{ points: number; seconds: number; reconnects: number }> {
  const before = acked();
  const reconnectsBefore = sims.reduce((n, d) => n + d.reconnects, 0);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const intervalMs = (1000 * pointsPerFrame.reduce((a, b) => a + b, 0)) / totalPerS;
  await Promise.all(
    sims.map(async (device, i) => {
      // Spread the devices' first frames over one interval, neighbours far apart (the golden-ratio
      // sequence): a customer's devices are neighbours, and a frame carries many fixes, so
      // neighbours sending together would be bursts far above the customer's rate.
      let next = started + intervalMs * ((i * 0.6180339887) % 1);
      // Only sends scheduled inside the window: the offered rate is the configured one.
      while (next < deadline) {
        const wait = next - performance.now();
        if (wait > 0) await sleep(wait);
        next += intervalMs;
        if (!(await device.step())) await sleep(200);
      }
    }),
  );
  return {
    points: acked() - before,
    seconds: (performance.now() - started) / 1000,
    reconnects: sims.reduce((n, d) => n + d.reconnects, 0) - reconnectsBefore,
  };
}

function cpuS(u: NodeJS.CpuUsage): number {
  return (u.user + u.system) / 1e6;
}

/** Waits until the receiver has `expected` deliveries, or got none for `stallS` seconds. */
async function waitForTotal(receiver: Receiver, expected: number, stallS: number): Promise<ReceiverStats> {
  let last = -1;
  let lastChange = Date.now();
  for (;;) {
    const s = await receiver.ask({ cmd: 'stats' });
    if (s.total !== last) {
      last = s.total;
      lastChange = Date.now();
    }
    if (s.total >= expected || Date.now() - lastChange > stallS * 1000) return s;
    await sleep(250);
  }
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** One load phase: reset the receiver, drive, read the steady window, wait for the queue to drain. */
async function phase(
  name: string,
  o: WebhookBenchOptions,
  receiver: Receiver,
  platform: PlatformProcess,
  fleet: { sims: SimulatedDevice[]; acked: () => number; pointsPerFrame: number[] },
  perCustomerS: number,
): Promise<{ deliveredPerS: number; offered: number; acked: number; stats: ReceiverStats; drained: ReceiverStats }> {
  await receiver.ask({ cmd: 'reset' });
  const pid = platform.child.pid!;
  const platformBefore = procUsage(pid).cpuS;
  const clientBefore = process.cpuUsage();
  const receiverBefore = cpuS((await receiver.ask({ cmd: 'stats' })).cpu);
  // The steady window: from a fifth into the load to its end.
  const warmupS = o.seconds / 5;
  let windowStart: { at: number; total: number } | null = null;
  const marker = setTimeout(() => {
    void receiver.ask({ cmd: 'stats' }).then((s) => (windowStart = { at: performance.now(), total: s.total }));
  }, warmupS * 1000);
  const load = await drive(fleet.sims, fleet.acked, fleet.pointsPerFrame, perCustomerS * o.customers, o.seconds);
  clearTimeout(marker);
  const end = await receiver.ask({ cmd: 'stats' });
  const endAt = performance.now();
  const start = windowStart as { at: number; total: number } | null;
  const deliveredPerS = start ? (end.total - start.total) / ((endAt - start.at) / 1000) : 0;
  const clientCpu = cpuS(process.cpuUsage(clientBefore));
  const platformCpu = procUsage(pid).cpuS - platformBefore;
  const receiverCpu = cpuS(end.cpu) - receiverBefore;
  const drained = await waitForTotal(receiver, load.points, 5);
  const offered = (perCustomerS * o.customers);
  const rates = Object.entries(drained.maxPerSecondByPath).filter(([p]) => p.startsWith('/c/')).map(([, n]) => n);
  process.stdout.write(
    `  ${name.padEnd(10)} offered ${fmt(offered)}/s (${fmt(perCustomerS)}/s per customer), acked ${fmt(load.points / load.seconds)} fixes/s, ` +
      `reconnects ${load.reconnects}\n` +
      `  ${''.padEnd(10)} delivered ${fmt(deliveredPerS)}/s over the last ${(o.seconds - warmupS).toFixed(0)} s; ` +
      `busiest customer ${Math.max(0, ...rates)} in one second (limit ${PRO_PER_S}); ` +
      `${fmt(drained.total)} deliveries for ${fmt(load.points)} acked fixes after draining\n` +
      `  ${''.padEnd(10)} latency (Teltonika fixes, ms clock) p50 ${drained.latency.p50} ms  p99 ${drained.latency.p99} ms  max ${drained.latency.max} ms  (n ${fmt(drained.latency.n)}); ` +
      `signatures ${drained.signatures.valid}/${drained.signatures.checked} valid\n` +
      `  ${''.padEnd(10)} CPU during load: platform ${platformCpu.toFixed(1)} s, load client ${clientCpu.toFixed(1)} s, receiver ${receiverCpu.toFixed(1)} s of ${load.seconds.toFixed(1)} s\n`,
  );
  return { deliveredPerS, offered, acked: load.points, stats: end, drained };
}

export async function runWebhookBench(o: WebhookBenchOptions): Promise<void> {
  process.stdout.write(
    `webhooks: ${o.customers} Pro customers x ${o.devicesPerCustomer} devices (protocols in turn), one endpoint each (position.updated), ` +
      `${o.pointsPerFrame} fix(es) per frame where the protocol allows, ${o.seconds} s per phase\n`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-webhooks-'));
  const dataDir = join(dir, 'data');
  const nodeArgs = benchNodeArgs();
  // Every simulated device connects from 127.0.0.1: the per-address cap (1000 by default) would turn the rest away.
  const { env, ports } = await platformEnv(dataDir, { FLEET_MAX_CONNECTIONS_PER_ADDRESS: '100000' });
  const receiver = await startReceiver();
  let platform: PlatformProcess | null = null;
  try {
    const customers = JSON.parse(
      execFileSync(process.execPath, [here('./webhooks-setup.js'), String(o.customers), 'pro'], { env, encoding: 'utf8' }),
    ) as Array<{ customer_id: string; api_key: string }>;

    const sampleBody = 620;
    const refSeconds = Math.max(3, Math.round(o.seconds / 3));
    await receiver.ask({ cmd: 'reset' });
    const ref = await referenceRun(`http://127.0.0.1:${receiver.port}/ref`, refSeconds, sampleBody);
    const refStats = await receiver.ask({ cmd: 'stats' });
    process.stdout.write(
      `  reference  ${fmt(ref.perS)} signed requests/s from a bare keep-alive client (64 in flight), receiver counted ${fmt(refStats.total)}; ` +
        `client CPU ${ref.cpuS.toFixed(1)} s, receiver CPU ${cpuS(refStats.cpu).toFixed(1)} s of ${refSeconds} s\n`,
    );

    platform = await startPlatformProcess(env, [], nodeArgs);
    const base = `http://127.0.0.1:${ports.http}`;
    const devices: BenchDevice[] = [];
    const secrets: Record<string, string> = {};
    const nextIndex: Record<ProtocolName, number> = { teltonika: 0, gt06: 0, jt808: 0 };
    await Promise.all(
      customers.map(async (c, i) => {
        const mine: BenchDevice[] = [];
        for (let d = 0; d < o.devicesPerCustomer; d++) {
          const protocol = BENCH_PROTOCOLS[(i + d) % BENCH_PROTOCOLS.length]!;
          const index = nextIndex[protocol]++;
          mine.push({ customer: i, protocol, info: { index, ...simulatedIdentity(BENCH_SEEDS[protocol], index), deviceId: null } });
        }
        for (const protocol of BENCH_PROTOCOLS) {
          await registerDevices({ url: base, apiKey: c.api_key }, protocol, mine.filter((d) => d.protocol === protocol).map((d) => d.info));
        }
        const path = `/c/${i}`;
        const endpoint = await http<{ id: string; secret: string }>(base, c.api_key, 'POST', '/v1/webhooks', {
          url: `http://127.0.0.1:${receiver.port}${path}`,
          events: ['position.updated'],
        });
        secrets[path] = endpoint.secret;
        devices.push(...mine);
      }),
    );
    await receiver.ask({
      cmd: 'config',
      secrets,
      msDevices: devices.filter((d) => d.protocol === 'teltonika').map((d) => d.info.deviceId!),
    });
    const gatewayPorts = { teltonika: ports.teltonika, gt06: ports.gt06, jt808: ports.jt808 };

    const limit = o.customers * PRO_PER_S;
    let ackedPoints = 0;
    const sims = simulate(devices, gatewayPorts, o.pointsPerFrame, (n) => (ackedPoints += n));
    const fleet = { sims, acked: () => ackedPoints, pointsPerFrame: devices.map((d) => Math.min(o.pointsPerFrame, encoders[d.protocol].maxPointsPerFrame)) };
    // A warm-up at the latency phase's rate, not counted: the first frames of thousands of freshly
    // logged-in units (first positions, online transitions, JIT) are not the steady state.
    const warmUp = await phase('warm-up', o, receiver, platform, fleet, PRO_PER_S / 2);
    await sleep(5000);
    // Latency before throughput, on a platform at rest: after a phase at the limits the queues take a
    // while to drain, and latency measured then would be that backlog's, not delivery's.
    const latency = await phase('latency', o, receiver, platform, fleet, PRO_PER_S / 2);
    const throughput = await phase('throughput', o, receiver, platform, fleet, PRO_PER_S * o.overload);
    for (const sim of sims) sim.stop();

    const { rssMb } = procUsage(platform.child.pid!);
    await platform.stop();
    platform = null;
    const db = new Database(deliveryDbPath(dataDir), { readonly: true });
    const states = Object.fromEntries(
      (db.prepare(`SELECT state, count(*) AS n FROM wh_deliveries GROUP BY state`).all() as Array<{ state: string; n: number }>).map((r) => [r.state, r.n]),
    );
    db.close();
    const queued = states.pending ?? 0;
    process.stdout.write(
      `  platform RSS at the end ${rssMb.toFixed(0)} MB; delivery queue after stop: ${JSON.stringify(states)}; ` +
        `fixes acked ${fmt(warmUp.acked + throughput.acked + latency.acked)}, delivered ${fmt(warmUp.drained.total + throughput.drained.total + latency.drained.total)} (warm-up included)\n`,
    );
    const ok = throughput.deliveredPerS >= 5000 && latency.drained.latency.p99 < 250 && queued === 0;
    process.stdout.write(
      `  webhooks: ${fmt(throughput.deliveredPerS)} deliveries/s aggregate (target >= 5,000; plan limits sum ${fmt(limit)}/s, ` +
        `${((throughput.deliveredPerS / limit) * 100).toFixed(0)}% of them, ${((throughput.deliveredPerS / ref.perS) * 100).toFixed(0)}% of the bare client's ${fmt(ref.perS)}/s); ` +
        `under the limits p50 ${latency.drained.latency.p50} ms p99 ${latency.drained.latency.p99} ms (target < 250 ms); queued at the end ${queued}${ok ? '' : '  [TARGET MISSED]'}\n`,
    );
  } finally {
    await platform?.stop();
    receiver.child.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}
