/**
 * `fleet` with every role runs the gateway, webhook delivery and the position history
 * each in a thread of its own: devices are acked by the gateway thread, their fixes
 * reach the read models and the API of the main thread, the history through its thread
 * and, signed, a webhook receiver through the delivery thread; the API lists deliveries, redelivers and sends tests across the threads;
 * /metrics counts the gateway thread's frames and appends; each thread is named after its
 * role; a stop drains the threads before the process exits.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultLogPath } from '../../core/config.js';
import { streamIndexPath } from '../../core/event-store/sqlite-schema.js';
import { runSimulation } from '../simulator/run.js';
import { until } from '../support/device-login.js';
import { platformEnv, startPlatformProcess, type PlatformProcess } from '../support/platform-process.js';
import { signatureValid, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-gateway-thread-'));
let server: PlatformProcess | null = null;
let rx: WebhookReceiver | null = null;

afterAll(async () => {
  await server?.stop('SIGKILL');
  await rx?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The names of a process's threads (Linux). */
const threadNames = (pid: number) => readdirSync(`/proc/${pid}/task`).map((tid) => readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim());

const metric = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);

describe('the role threads of fleet with every role', () => {
  it('ack devices, feed the API, /metrics and a webhook receiver, and drain on stop', async () => {
    const { env, ports } = await platformEnv(dir);
    server = await startPlatformProcess(env);
    const api = `http://127.0.0.1:${ports.http}`;
    const { api_key: apiKey } = JSON.parse(readFileSync(join(dir, 'demo-customer.json'), 'utf8')) as { api_key: string };
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${api}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      return { status: res.status, json: (await res.json()) as any };
    };
    rx = await startWebhookReceiver();
    const hook = await call('POST', '/v1/webhooks', { url: rx.url, events: ['position.updated'] });
    expect(hook.status).toBe(201);
    const secret = hook.json.secret as string;

    // A test send is made by the API's thread, from the delivery database the delivery thread keeps.
    const test = await call('POST', `/v1/webhooks/${hook.json.id}/test`, {});
    expect(test.status).toBe(200);
    expect(test.json.status).toBe(200);
    const [sample] = await rx.waitFor(1);
    expect(signatureValid(sample!, secret)).toBe(true);

    let acked = 0;
    const summary = await runSimulation({
      protocol: 'teltonika',
      host: '127.0.0.1',
      port: ports.teltonika,
      devices: 3,
      intervalMs: 100,
      durationS: 1,
      pointsPerFrame: 2,
      ackTimeoutMs: 10_000,
      api: { url: api, apiKey },
      onAck: (_device, points) => (acked += points.length),
    });
    expect(summary.reconnects).toBe(0);
    expect(acked).toBeGreaterThan(0);
    expect(acked).toBeLessThanOrEqual(200); // one page of deliveries below

    // The fixes the gateway thread stored are in the main thread's read models.
    let newest: Array<{ timestamp: string }> = [];
    const latest = async () => {
      const res = await fetch(`${api}/v1/positions/latest`, { headers: { authorization: `Bearer ${apiKey}` } });
      newest = ((await res.json()) as { data: Array<{ timestamp: string }> }).data;
      return newest.length;
    };
    await until(async () => (await latest()) === 3, 15_000, 'latest positions of the three devices');

    // And in the position history, which its own thread keeps in its own database (the API reads it read-only).
    const devices = (await call('GET', '/v1/devices')).json.data as Array<{ id: string }>;
    expect(devices).toHaveLength(3);
    // The simulated fixes are dated by their route: a day up to each device's newest fix holds them all.
    const newestFix = Math.max(...newest.map((p) => Date.parse(p.timestamp)));
    const window = `from=${new Date(newestFix - 86_400_000).toISOString()}&to=${new Date(newestFix + 1).toISOString()}`;
    const inHistory = async () => {
      let fixes = 0;
      for (const d of devices) {
        const page = await call('GET', `/v1/positions?device_id=${d.id}&${window}&limit=1000`);
        expect(page.status, JSON.stringify(page.json)).toBe(200);
        fixes += (page.json.data as unknown[]).length;
      }
      return fixes;
    };
    let historyFixes = 0;
    await until(async () => (historyFixes = await inHistory()) === acked, 15_000, `every acked fix in the history (${acked})`, 250).catch((err: Error) => {
      throw new Error(`${err.message}: ${historyFixes} there`);
    });
    const ready = await call('GET', '/readyz');
    expect(ready.status).toBe(200);

    // Each thread is named after its role (Linux only), as `top -H` and the ingest bench show them.
    if (process.platform === 'linux') {
      const names = threadNames(server.child.pid!);
      expect(names).toEqual(
        expect.arrayContaining(['platform', 'gateway', 'history', 'history-pages', 'webhooks', 'log-writer', 'log-upkeep', 'ckpt readmodels', 'ckpt history', 'ckpt webhooks']),
      );
    }

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

    // Every acked fix reaches the receiver, signed, through the delivery thread.
    const fixes = (await rx.waitFor(1 + acked, 30_000)).slice(1);
    expect(fixes.every((r) => r.json.event === 'position.updated' && signatureValid(r, secret))).toBe(true);
    expect(new Set(fixes.map((r) => r.json.event_id)).size).toBe(acked);

    // Listed by the API's thread; a redelivery is asked of the delivery thread and sends the same event again.
    let listed: { json: { data: Array<{ id: string; event_id: string; state: string }> } } = { json: { data: [] } };
    await until(
      async () => {
        listed = await call('GET', `/v1/webhooks/${hook.json.id}/deliveries?limit=200`);
        return listed.json.data.length === acked && listed.json.data.every((d) => d.state === 'delivered');
      },
      15_000,
      'every delivery listed as delivered',
    );
    const one = listed.json.data[0]!;
    expect((await call('POST', `/v1/webhooks/${hook.json.id}/deliveries/${one.id}/redeliver`)).status).toBe(202);
    const again = (await rx.waitFor(2 + acked, 15_000)).at(-1)!;
    expect(again.json.event_id).toBe(one.event_id);

    await server.stop('SIGTERM');
    expect(server.child.exitCode).toBe(0);
    server = null;
    // Stopped, the process left the log's upkeep lease released: the next start's upkeep takes it at once.
    const index = new Database(streamIndexPath(defaultLogPath(dir)), { readonly: true });
    expect(index.prepare('SELECT renewed_at FROM upkeep_lease').pluck().get()).toBe(0);
    index.close();
  }, 120_000);
});
