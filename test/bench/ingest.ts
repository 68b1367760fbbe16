/**
 * Durable ingest: N simulated devices (a third per protocol) over real sockets,
 * each sending its next frame as soon as the previous one is acked, against
 * (1) a reference server that only frames and acks and (2) the real gateway
 * storing to SQLite with synchronous=FULL. Same load, same run.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProtocolName } from '../../gateway/protocol.js';
import { percentile, runSimulation } from '../simulator/run.js';
import { BENCH_SEEDS } from './fleet.js';

export interface IngestFigure {
  target: 'reference' | 'gateway';
  recordsPerSecond: number;
  p50: number;
  p99: number;
  reconnects: number;
}

/** One target's raw outcome: records and seconds add up across rounds, latencies merge. */
interface IngestRun {
  target: IngestFigure['target'];
  records: number;
  seconds: number;
  latencies: number[];
  reconnects: number;
}

const SERVER = fileURLToPath(new URL('./ingest-server.js', import.meta.url));

async function startServer(mode: string, dir: string, devices: number): Promise<{ child: ChildProcess; ports: Record<ProtocolName, number> }> {
  // FLEET_BENCH_NODE_ARGS: node flags for the server processes, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const execArgv = process.env.FLEET_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = fork(SERVER, [mode, dir, String(devices)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'], execArgv });
  const ports = await new Promise<Record<ProtocolName, number>>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"ports"'));
      if (line) resolve((JSON.parse(line) as { ports: Record<ProtocolName, number> }).ports);
    });
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
  return { child, ports };
}

async function drive(target: IngestFigure['target'], devices: number, seconds: number, pointsPerFrame: number): Promise<IngestRun> {
  const dir = mkdtempSync(join(tmpdir(), `fleet-bench-${target}-`));
  const { child, ports } = await startServer(target, dir, devices);
  const perProtocol = Math.ceil(devices / 3);
  const latencies: number[] = [];
  let records = 0;
  let reconnects = 0;
  const started = performance.now();
  const summaries = await Promise.all(
    (['teltonika', 'gt06', 'jt808'] as const).map((protocol) =>
      runSimulation({
        protocol,
        host: '127.0.0.1',
        port: ports[protocol],
        devices: perProtocol,
        intervalMs: 0,
        durationS: seconds,
        pointsPerFrame,
        seed: BENCH_SEEDS[protocol],
        ackTimeoutMs: 30_000,
        onAck: (_d, points, latency) => {
          records += points.length;
          latencies.push(latency);
        },
      }),
    ),
  );
  const elapsed = (performance.now() - started) / 1000;
  for (const s of summaries) reconnects += s.reconnects;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
  return { target, records, seconds: elapsed, latencies, reconnects };
}

function figure(runs: IngestRun[]): IngestFigure {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  return {
    target: runs[0]!.target,
    recordsPerSecond: runs.reduce((n, r) => n + r.records, 0) / runs.reduce((n, r) => n + r.seconds, 0),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    reconnects: runs.reduce((n, r) => n + r.reconnects, 0),
  };
}

function line(f: IngestFigure, label: string): string {
  return `  ${label.padEnd(18)} ${Math.round(f.recordsPerSecond).toLocaleString('en-US').padStart(9)} acked records/s   ack p50 ${f.p50.toFixed(2)} ms   p99 ${f.p99.toFixed(2)} ms   reconnects ${f.reconnects}\n`;
}

/**
 * Rounds alternate reference and gateway, so a slow spell of the machine does not land on
 * one target only; the totals add up records and seconds over all rounds.
 */
export async function runIngestBench(devices = 1000, seconds = 10, pointsPerFrame = 1, rounds = 2): Promise<IngestFigure[]> {
  process.stdout.write(
    `ingest: ${devices} devices (a third per protocol), ${pointsPerFrame} record(s) per frame, ${rounds} round(s) of ${seconds} s per target\n`,
  );
  const runs: Record<IngestFigure['target'], IngestRun[]> = { reference: [], gateway: [] };
  for (let round = 1; round <= rounds; round++) {
    for (const target of ['reference', 'gateway'] as const) {
      const run = await drive(target, devices, seconds, pointsPerFrame);
      runs[target].push(run);
      process.stdout.write(line(figure([run]), `${target} (round ${round})`));
    }
  }
  const reference = figure(runs.reference);
  const gateway = figure(runs.gateway);
  process.stdout.write(line(reference, 'reference (all)') + line(gateway, 'gateway (all)'));
  const throughput = gateway.recordsPerSecond / reference.recordsPerSecond;
  const p99 = gateway.p99 / reference.p99;
  process.stdout.write(
    `  gateway/reference: throughput ${(throughput * 100).toFixed(0)}% (target >= 60%), ack p99 ${p99.toFixed(2)}x (target <= 2x)\n`,
  );
  return [reference, gateway];
}
