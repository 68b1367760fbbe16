/**
 * The webhook bench's receiver, a process of its own (forked, IPC to the
 * parent): a keep-alive HTTP server that answers 204 at once and counts what
 * it got per path (one path per customer's endpoint, `/ref` for the bare
 * reference client). Per delivery it records event-to-delivery latency:
 * receive time minus the payload's `position.timestamp`, the fix time the load
 * client set to the moment it sent the frame (only for devices whose protocol
 * carries milliseconds). One delivery in SAMPLE has its signature verified
 * the way the README tells integrators, so the bench counts real signed
 * deliveries only.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '../../webhook-delivery/signature.js';
import { percentile } from '../simulator/run.js';

const SAMPLE = 50;

export type ReceiverCommand =
  | { cmd: 'config'; secrets: Record<string, string>; msDevices: string[] }
  | { cmd: 'reset' }
  | { cmd: 'stats' };

export interface ReceiverStats {
  total: number;
  byPath: Record<string, number>;
  /** Most deliveries a path got in one whole wall-clock second since the reset. */
  maxPerSecondByPath: Record<string, number>;
  latency: { n: number; p50: number; p99: number; max: number };
  signatures: { checked: number; valid: number };
  /** process.cpuUsage() of this process, µs. */
  cpu: { user: number; system: number };
}

let secrets: Record<string, string> = {};
let msDevices = new Set<string>();
let total = 0;
let byPath = new Map<string, number>();
let perSecond = new Map<string, Map<number, number>>();
let latencies: number[] = [];
let checked = 0;
let valid = 0;

function reset(): void {
  total = 0;
  byPath = new Map();
  perSecond = new Map();
  latencies = [];
  checked = 0;
  valid = 0;
}

function stats(): ReceiverStats {
  const sorted = latencies.slice().sort((a, b) => a - b);
  const nowS = Math.floor(Date.now() / 1000);
  const maxPerSecondByPath: Record<string, number> = {};
  for (const [path, seconds] of perSecond) {
    let max = 0;
    // The current second is not whole yet.
    for (const [s, n] of seconds) if (s < nowS && n > max) max = n;
    maxPerSecondByPath[path] = max;
  }
  return {
    total,
    byPath: Object.fromEntries(byPath),
    maxPerSecondByPath,
    latency: { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? 0 },
    signatures: { checked, valid },
    cpu: process.cpuUsage(),
  };
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    res.writeHead(204).end();
    const path = req.url ?? '/';
    const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    total += 1;
    const n = (byPath.get(path) ?? 0) + 1;
    byPath.set(path, n);
    let seconds = perSecond.get(path);
    if (!seconds) perSecond.set(path, (seconds = new Map()));
    const s = Math.floor(at / 1000);
    seconds.set(s, (seconds.get(s) ?? 0) + 1);
    if (path === '/ref') return;
    const payload = JSON.parse(raw.toString('utf8')) as { device_id: string; position?: { timestamp: string } };
    if (payload.position && msDevices.has(payload.device_id)) latencies.push(at - Date.parse(payload.position.timestamp));
    if (n % SAMPLE === 1) {
      checked += 1;
      const secret = secrets[path];
      if (
        secret &&
        verifyWebhook({ secret, header: req.headers['x-service-signature'] as string | undefined, timestamp: req.headers['x-service-timestamp'] as string | undefined, body: raw })
      ) {
        valid += 1;
      }
    }
  });
});
server.keepAliveTimeout = 60_000;

process.on('message', (m: ReceiverCommand) => {
  if (m.cmd === 'config') {
    secrets = m.secrets;
    msDevices = new Set(m.msDevices);
  } else if (m.cmd === 'reset') reset();
  process.send!({ reply: m.cmd, stats: stats() });
});
process.on('disconnect', () => process.exit(0));

// A backlog for many delivery connections opening at once (the default 511 drops SYNs: connects then take seconds).
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => process.send!({ port: (server.address() as AddressInfo).port }));
