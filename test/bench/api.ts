/**
 * API throughput: a lean load client (test/bench/http-load.ts, in this
 * process) against the platform as `npm start` runs it (latest positions over
 * a 10k-device fleet, position history), every list walked page by page along
 * its cursors, and in the same run, against static Fastify routes answering
 * bodies of the same sizes from a process of their own (api-server.ts, which
 * also starts the platform). Each server's CPU time is printed next to the
 * client's, so a reference that did not keep its core busy shows.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ApiBenchTargets } from './api-server.js';
import { httpLoad, type HttpLoadFigure } from './http-load.js';
import { procUsage, threadCpuByName, threadCpuLine, threadCpuSpent } from './proc-usage.js';

const SERVER = fileURLToPath(new URL('./api-server.js', import.meta.url));
const CONNECTIONS = 10;

interface Figure extends HttpLoadFigure {
  serverCpuSeconds: number;
  /** The server's CPU seconds per thread name (core/thread-name.ts) over the load. */
  serverThreads: Map<string, number>;
}

async function load(serverPid: number, port: number, path: string, headers: Record<string, string>, seconds: number): Promise<Figure> {
  const before = procUsage(serverPid).cpuS;
  const threadsBefore = threadCpuByName(serverPid);
  const figure = await httpLoad({ port, path, headers, connections: CONNECTIONS, seconds });
  const serverThreads = threadCpuSpent(threadsBefore, threadCpuByName(serverPid));
  return { ...figure, serverCpuSeconds: procUsage(serverPid).cpuS - before, serverThreads };
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
    clientCpuSeconds: rounds.reduce((n, f) => n + f.clientCpuSeconds, 0),
    serverCpuSeconds: rounds.reduce((n, f) => n + f.serverCpuSeconds, 0),
    serverThreads: rounds.reduce((sum, f) => {
      for (const [name, s] of f.serverThreads) sum.set(name, (sum.get(name) ?? 0) + s);
      return sum;
    }, new Map<string, number>()),
  };
}

/**
 * Each path alternates static and API `rounds` times, so a slow spell of the machine does not land on one of them only.
 * `only`: run just the paths whose name contains it (e.g. `history`).
 * `warmupSeconds`: both servers first serve the path this long, not counted. A platform just
 * started answered history pages at half its later rate for its first 2 s and reached it
 * after about 8 s (V8 grows a thread's young generation step by step), so a first round
 * measured partly a start-up; a server in use is warm. The warm-up's figures are printed.
 */
export async function runApiBench(devices = 10_000, seconds = 5, rounds = 2, only?: string, warmupSeconds = 10): Promise<void> {
  // FLEET_BENCH_NODE_ARGS (node-args.ts) reaches the platform's process through the env.
  const child = fork(SERVER, [String(devices)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'], execArgv: [] });
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
      `api: ${devices.toLocaleString('en-US')} devices, ${CONNECTIONS} keep-alive connections, a warm-up of ${warmupSeconds} s per server (not counted), then ${rounds} round(s) of ${seconds} s per target (p50/p99: worst round; cpu: seconds used by the server process and by the client)\n`,
    );
    for (const p of targets.paths.filter((t) => only === undefined || t.name.includes(only))) {
      const warmup =
        warmupSeconds > 0
          ? {
              static: await load(child.pid!, targets.reference, p.staticPath, {}, warmupSeconds),
              api: await load(targets.apiPid, targets.api, p.path, { authorization: `Bearer ${targets.apiKey}` }, warmupSeconds),
            }
          : null;
      const staticRounds: Figure[] = [];
      const apiRounds: Figure[] = [];
      for (let round = 0; round < rounds; round++) {
        staticRounds.push(await load(child.pid!, targets.reference, p.staticPath, {}, seconds));
        apiRounds.push(await load(targets.apiPid, targets.api, p.path, { authorization: `Bearer ${targets.apiKey}` }, seconds));
      }
      const reference = combine(staticRounds);
      const api = combine(apiRounds);
      const ratio = api.requestsPerSecond / reference.requestsPerSecond;
      process.stdout.write(
        `  ${p.name} (${p.bytes.toLocaleString('en-US')} B)\n` +
          (warmup ? `    warm-up (not counted): static ${fmt(warmup.static)}\n                           api    ${fmt(warmup.api)}\n` : '') +
          `    static route ${fmt(reference)}\n` +
          `    api          ${fmt(api)}\n` +
          threadCpuLine(api.serverThreads, api.requests, 'request', 0, '      ') +
          `    api/static: ${(ratio * 100).toFixed(0)}% of req/s (target >= ${p.target.ratio * 100}%), api p99 ${api.p99} ms (target < ${p.target.p99Ms} ms)\n`,
      );
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

function fmt(f: Figure): string {
  const cpu = `cpu server ${f.serverCpuSeconds.toFixed(1)} s, client ${f.clientCpuSeconds.toFixed(1)} s of ${f.seconds.toFixed(1)} s`;
  return `${Math.round(f.requestsPerSecond).toLocaleString('en-US').padStart(7)} req/s  p50 ${f.p50} ms  p99 ${f.p99} ms  ${cpu}${f.errors ? `  errors ${f.errors}` : ''}`;
}

