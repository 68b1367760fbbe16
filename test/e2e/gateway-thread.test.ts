/**
 * `fleet` with every role runs the gateway in a thread of its own: devices are acked by
 * that thread, their fixes reach the read models and the live API of the main thread,
 * /metrics counts the thread's frames and appends, and a stop drains the thread's
 * connections before the process exits.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runSimulation } from '../simulator/run.js';
import { until } from '../support/device-login.js';
import { platformEnv, startPlatformProcess, type PlatformProcess } from '../support/platform-process.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-gateway-thread-'));
let server: PlatformProcess | null = null;

afterAll(async () => {
  await server?.stop('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const metric = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);

describe('the gateway thread of fleet with every role', () => {
  it('acks devices, feeds the API and /metrics, and drains on stop', async () => {
    const { env, ports } = await platformEnv(dir);
    server = await startPlatformProcess(env);
    const api = `http://127.0.0.1:${ports.http}`;
    const { api_key: apiKey } = JSON.parse(readFileSync(join(dir, 'demo-customer.json'), 'utf8')) as { api_key: string };

    let acked = 0;
    const summary = await runSimulation({
      protocol: 'teltonika',
      host: '127.0.0.1',
      port: ports.teltonika,
      devices: 3,
      intervalMs: 0,
      durationS: 1,
      pointsPerFrame: 2,
      ackTimeoutMs: 10_000,
      api: { url: api, apiKey },
      onAck: (_device, points) => (acked += points.length),
    });
    expect(summary.reconnects).toBe(0);
    expect(acked).toBeGreaterThan(0);

    // The fixes the gateway thread stored are in the main thread's read models.
    const latest = async () => {
      const res = await fetch(`${api}/v1/positions/latest`, { headers: { authorization: `Bearer ${apiKey}` } });
      return ((await res.json()) as { data: unknown[] }).data.length;
    };
    await until(async () => (await latest()) === 3, 15_000, 'latest positions of the three devices');

    // Counters arrive from the thread once a second.
    let text = '';
    await until(
      async () => {
        text = await (await fetch(`${api}/metrics`)).text();
        return metric(text, 'fleet_gateway_records_stored_total') >= acked;
      },
      15_000,
      'gateway counters in /metrics',
    );
    expect(metric(text, 'fleet_gateway_frames_accepted_total')).toBeGreaterThan(0);
    expect(metric(text, 'fleet_gateway_connections_accepted_total')).toBe(3);
    // The thread appends through its own handle on the store; the process's append count includes its events.
    expect(metric(text, 'fleet_store_appended_events_total')).toBeGreaterThanOrEqual(acked);

    await server.stop('SIGTERM');
    expect(server.child.exitCode).toBe(0);
    server = null;
  }, 120_000);
});
