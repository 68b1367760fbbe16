/**
 * API throughput: autocannon against the real API (latest positions over a
 * 10k-device fleet, position history) and, in the same run, against static
 * Fastify routes answering bodies of the same sizes.
 */
import autocannon from 'autocannon';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ApiBenchTargets } from './api-server.js';

const SERVER = fileURLToPath(new URL('./api-server.js', import.meta.url));

interface Figure {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(url: string, headers: Record<string, string>, seconds: number): Promise<Figure> {
  const result = await autocannon({ url, headers, connections: 10, duration: seconds });
  return {
    requests: result.requests.total,
    seconds: result.duration,
    requestsPerSecond: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

/** Rounds add up: requests over seconds; latencies are the worst round's (conservative). */
function combine(rounds: Figure[]): Figure {
  const requests = rounds.reduce((n, f) => n + f.requests, 0);
  const seconds = rounds.reduce((n, f) => n + f.seconds, 0);
  return {
    requests,
    seconds,
    requestsPerSecond: requests / seconds,
    p50: Math.max(...rounds.map((f) => f.p50)),
    p99: Math.max(...rounds.map((f) => f.p99)),
    errors: rounds.reduce((n, f) => n + f.errors, 0),
  };
}

/** Each path alternates static and API `rounds` times, so a slow spell of the machine does not land on one of them only. */
/** `only`: run just the paths whose name contains it (e.g. `history`). */
export async function runApiBench(devices = 10_000, seconds = 5, rounds = 2, only?: string): Promise<void> {
  // FLEET_BENCH_NODE_ARGS: node flags for the API server process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const execArgv = process.env.FLEET_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = fork(SERVER, [String(devices)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'], execArgv });
  try {
    const targets = await new Promise<ApiBenchTargets>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n').find((l) => l.startsWith('{"targets"'));
        if (line) resolve((JSON.parse(line) as { targets: ApiBenchTargets }).targets);
      });
      child.once('exit', (code) => reject(new Error(`api bench server exited with ${code}`)));
    });
    process.stdout.write(
      `api: ${devices.toLocaleString('en-US')} devices, autocannon 10 connections, ${rounds} round(s) of ${seconds} s per target (p50/p99: worst round)\n`,
    );
    for (const p of targets.paths.filter((t) => only === undefined || t.name.includes(only))) {
      const staticRounds: Figure[] = [];
      const apiRounds: Figure[] = [];
      for (let round = 0; round < rounds; round++) {
        staticRounds.push(await load(`http://127.0.0.1:${targets.reference}${p.staticPath}`, {}, seconds));
        apiRounds.push(await load(`http://127.0.0.1:${targets.api}${p.path}`, { authorization: `Bearer ${targets.apiKey}` }, seconds));
      }
      const reference = combine(staticRounds);
      const api = combine(apiRounds);
      const ratio = api.requestsPerSecond / reference.requestsPerSecond;
      process.stdout.write(
        `  ${p.name} (${p.bytes.toLocaleString('en-US')} B)\n` +
          `    static route ${fmt(reference)}\n` +
          `    api          ${fmt(api)}\n` +
          `    api/static: ${(ratio * 100).toFixed(0)}% of req/s (target >= ${p.target.ratio * 100}%), api p99 ${api.p99} ms (target < ${p.target.p99Ms} ms)\n`,
      );
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

function fmt(f: Figure): string {
  return `${Math.round(f.requestsPerSecond).toLocaleString('en-US').padStart(7)} req/s  p50 ${f.p50} ms  p99 ${f.p99} ms${f.errors ? `  errors ${f.errors}` : ''}`;
}
