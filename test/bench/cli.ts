/** npm run bench -- ingest [--devices N] [--duration S] [--rounds R] [--only reference,durable-reference,gateway,platform] [--open-devices N (0: none)] [--open-duration S] [--timeline] [--store postgres] | decode | api [--devices N] [--duration S] [--rounds R] [--warmup S] [--only history] | geofences | rebuild [--events N] [--store postgres] | stream-index [--devices N] [--per-stream N] | webhooks [--customers N] [--devices N (per customer)] [--duration S] [--points-per-frame K] [--overload X] */
import { parseArgs } from 'node:util';
import { runApiBench } from './api.js';
import { runDecodeBench } from './decode.js';
import { runGeofenceBench } from './geofences.js';
import { TARGETS, runIngestBench, type Target } from './ingest.js';
import { runRebuildBench } from './rebuild.js';
import { runStreamIndexBench } from './stream-index.js';
import { runWebhookBench } from './webhooks.js';

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      devices: { type: 'string' },
      duration: { type: 'string' },
      'points-per-frame': { type: 'string' },
      rounds: { type: 'string', default: '2' },
      customers: { type: 'string' },
      overload: { type: 'string' },
      events: { type: 'string' },
      'open-devices': { type: 'string' },
      'open-duration': { type: 'string' },
      only: { type: 'string' },
      'per-stream': { type: 'string' },
      warmup: { type: 'string' },
      timeline: { type: 'boolean', default: false },
      store: { type: 'string' },
    },
  });
  const store = storeOption(values.store);
  const which = positionals.length > 0 ? positionals : ['decode', 'ingest', 'api'];
  for (const name of which) {
    if (name === 'decode') runDecodeBench();
    else if (name === 'ingest') {
      await runIngestBench({
        devices: Number(values.devices ?? 1000),
        seconds: Number(values.duration ?? 10),
        rounds: Number(values.rounds),
        openDevices: Number(values['open-devices'] ?? 15_000),
        openIntervalS: 5,
        openSeconds: Number(values['open-duration'] ?? 30),
        ...(values.only === undefined ? {} : { only: ingestTargets(values.only) }),
        timeline: values.timeline,
        ...(store ? { store } : {}),
      });
    }
    else if (name === 'api') {
      await runApiBench(Number(values.devices ?? 10_000), Number(values.duration ?? 5), Number(values.rounds), values.only, Number(values.warmup ?? 10));
      if (values.only === undefined) runGeofenceBench();
    } else if (name === 'geofences') runGeofenceBench();
    else if (name === 'webhooks') {
      await runWebhookBench({
        customers: Number(values.customers ?? 60),
        devicesPerCustomer: Number(values.devices ?? 100),
        seconds: Number(values.duration ?? 15),
        pointsPerFrame: Number(values['points-per-frame'] ?? 10),
        overload: Number(values.overload ?? 1),
      });
    } else if (name === 'rebuild') await runRebuildBench(Number(values.events ?? 500_000), store);
    else if (name === 'stream-index') runStreamIndexBench(Number(values.devices ?? 15_000), Number(values['per-stream'] ?? 1_500));
    else throw new Error(`unknown benchmark ${name}; try ingest, decode, api, geofences, rebuild, stream-index or webhooks`);
  }
}

/** `--store` of the ingest and rebuild benches: postgres runs the platform on PostgreSQL too; sqlite (the default) does not. */
function storeOption(text: string | undefined): 'postgres' | undefined {
  if (text === undefined || text === 'sqlite') return undefined;
  if (text === 'postgres') return text;
  throw new Error(`--store takes sqlite or postgres; got ${text}`);
}

/** `--only` of the ingest bench: servers named with commas, each one of TARGETS. */
function ingestTargets(text: string): Target[] {
  const names = text.split(',').map((n) => n.trim());
  const unknown = names.filter((n) => !(TARGETS as readonly string[]).includes(n));
  if (unknown.length > 0 || names.length === 0) throw new Error(`--only takes ${TARGETS.join(', ')} (comma-separated); got ${text}`);
  return names as Target[];
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
