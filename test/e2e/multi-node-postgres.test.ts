/**
 * Every role on two nodes against one real PostgreSQL, as users start them (`node dist/main.js
 * --roles ...`): two gateways, two API nodes (each with its read models), two webhook delivery
 * nodes. Units of the three protocols are spread over both gateways; mid-load one gateway and the
 * webhook node delivering the busiest customer are killed with SIGKILL and restarted. Then every
 * acknowledged fix is in the log once and in the history, every event reached the receiver at
 * least once with its stable event_id and a valid signature, and a customer hammering both API
 * nodes got no more than its plan.
 */
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSimulation, type SimulationOptions } from '../simulator/run.js';
import { MAIN, platformEnv, startPlatformProcess, type PlatformProcess } from '../support/platform-process.js';
import { startPostgresServer, type PostgresServer } from '../support/postgres-server.js';
import { until } from '../support/wait.js';
import { signatureValid, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const dir = mkdtempSync(join(tmpdir(), 'fleet-multi-node-'));
let server: PostgresServer;
let rx: WebhookReceiver;
const running = new Map<string, PlatformProcess>();

beforeAll(async () => {
  server = await startPostgresServer();
  await server.createDatabase('fleet_multi');
  rx = await startWebhookReceiver();
}, 60_000);

afterAll(async () => {
  await Promise.all([...running.values()].map((p) => p.stop('SIGKILL')));
  await rx?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('every role on two nodes on PostgreSQL', () => {
  it('keeps every acked fix once, delivers every event, and holds the plan across API nodes through kill -9', async () => {
    const shared = { FLEET_STORE: server.url('fleet_multi'), FLEET_SECRET_KEY: randomBytes(32).toString('base64') };
    const node = async (name: string) => ({ name, ...(await platformEnv(join(dir, name), shared)) });
    const nodes = {
      api1: await node('api1'),
      api2: await node('api2'),
      gw1: await node('gw1'),
      gw2: await node('gw2'),
      wh1: await node('wh1'),
      wh2: await node('wh2'),
    };
    const roles: Record<keyof typeof nodes, string> = {
      api1: 'projections,api',
      api2: 'projections,api',
      gw1: 'gateway',
      gw2: 'gateway',
      wh1: 'webhooks',
      wh2: 'webhooks',
    };
    const start = async (n: keyof typeof nodes) => running.set(n, await startPlatformProcess(nodes[n].env, ['--roles', roles[n]]));
    // The first start creates the schema; the others find it.
    await start('api1');
    await Promise.all([start('api2'), start('wh1')]);
    await Promise.all([start('wh2'), start('gw1'), start('gw2')]);

    const customerIds = new Map<string, string>();
    const customer = (name: string, plan: string) => {
      const r = spawnSync(process.execPath, [MAIN, 'customer', 'create', '--name', name, '--plan', plan, '--json'], { env: nodes.api1.env, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { api_key: string; customer_id: string };
      customerIds.set(out.api_key, out.customer_id);
      return out.api_key;
    };
    const keys = { a: customer('Multi A', 'pro'), b: customer('Multi B', 'pro'), hammer: customer('Hammer', 'free') };
    const apiUrl = (n: 'api1' | 'api2') => `http://127.0.0.1:${nodes[n].ports.http}`;
    const api = async (n: 'api1' | 'api2', key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> => {
      const res = await fetch(apiUrl(n) + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, json: res.status === 204 ? {} : await res.json() };
    };

    const secrets = new Map<string, string>();
    for (const key of [keys.a, keys.b]) {
      const hook = await api('api1', key, 'POST', '/v1/webhooks', { url: rx.url, events: ['*'] });
      expect(hook.status).toBe(201);
      secrets.set(hook.json.id, hook.json.secret);
    }

    // Two customers, two delivery nodes: each node ends up with one customer's lease.
    const db = new pg.Client({ connectionString: server.url('fleet_multi') });
    await db.connect();
    const leases = async () =>
      (await db.query<{ name: string; holder: string }>("SELECT name, holder FROM fleet_leases WHERE scope = 'webhooks' AND expires_at > now()")).rows;
    await until(async () => new Set((await leases()).map((l) => l.holder)).size === 2, 'the two delivery nodes sharing the customers', 60_000);

    // Units of all three protocols on both gateways, for both customers; registered through both API nodes.
    const acked: Array<{ deviceId: string; fixTime: number }> = [];
    const customerOf = new Map<string, string>();
    const runs: Array<Promise<unknown>> = [];
    const drive = (gw: 'gw1' | 'gw2', protocol: SimulationOptions['protocol'], key: string, seed: number, apiNode: 'api1' | 'api2') =>
      runs.push(
        runSimulation({
          protocol, host: '127.0.0.1', port: nodes[gw].ports[protocol], devices: 2, intervalMs: 300, durationS: 16,
          pointsPerFrame: 1, seed, ackTimeoutMs: 3000, api: { url: apiUrl(apiNode), apiKey: key },
          onAck: (device, points) => {
            customerOf.set(device.deviceId!, key);
            for (const p of points) acked.push({ deviceId: device.deviceId!, fixTime: p.fixTime });
          },
        }),
      );
    drive('gw1', 'teltonika', keys.a, 101, 'api1');
    drive('gw2', 'teltonika', keys.a, 102, 'api2');
    drive('gw1', 'gt06', keys.a, 103, 'api2');
    drive('gw2', 'jt808', keys.a, 104, 'api1');
    drive('gw2', 'gt06', keys.b, 105, 'api1');
    drive('gw1', 'jt808', keys.b, 106, 'api2');

    // A free customer (60 a minute, bursts of 120) hammering both API nodes while all this goes on.
    const hammer = (async () => {
      const startedAt = Date.now();
      const statuses: number[] = [];
      let i = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (i < 400) {
            const n = i++ % 2 === 0 ? 'api1' : 'api2';
            statuses.push((await api(n, keys.hammer, 'GET', '/v1/devices')).status);
          }
        }),
      );
      return { statuses, elapsedS: (Date.now() - startedAt) / 1000 };
    })();

    await until(() => acked.length >= 60, 'fixes acked on both gateways', 60_000);
    await until(async () => (await leases()).length === 2, 'both leases held', 30_000);
    // The customer with the most outcomes so far (units of A send most), and the node delivering it.
    const busiest = (
      await db.query<{ customer_id: string }>('SELECT customer_id FROM fleet_webhook_outcomes GROUP BY customer_id ORDER BY count(*) DESC LIMIT 1')
    ).rows[0]!.customer_id;
    const holder = (await leases()).find((l) => l.name === busiest)!.holder;
    const killedWebhooks: 'wh1' | 'wh2' = holder.split(':')[1] === String(running.get('wh1')!.child.pid) ? 'wh1' : 'wh2';
    const busiestKey = customerIds.get(keys.a) === busiest ? keys.a : keys.b;
    await Promise.all([running.get('gw1')!.stop('SIGKILL'), running.get(killedWebhooks)!.stop('SIGKILL')]);
    const killedAt = Date.now();
    const ackedAtKill = acked.length;
    await start('gw1');
    // The other delivery node takes the dead node's customer over once its lease lapses, and delivers it.
    await until(async () => (await leases()).some((l) => l.name === busiest && l.holder !== holder), 'the lease taken over', 60_000);
    const takeoverS = (Date.now() - killedAt) / 1000;
    await until(
      () => rx.received.some((r) => r.at > killedAt + takeoverS * 1000 && customerOf.get(r.json.device_id) === busiestKey),
      'a delivery of the dead node\'s customer from the other node',
      60_000,
    );
    await start(killedWebhooks);
    await Promise.all(runs);
    const { statuses, elapsedS } = await hammer;
    expect(acked.length).toBeGreaterThan(ackedAtKill);

    // Every acknowledged fix is in the log exactly once (and no fix twice).
    const stored = await db.query<{ data: string }>("SELECT data FROM fleet_events WHERE type = 'PositionRecorded'");
    const counts = new Map<string, number>();
    for (const r of stored.rows) {
      const d = JSON.parse(r.data) as { device_id: string; fix_time: number };
      const k = `${d.device_id}@${d.fix_time}`;
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    const duplicates = [...counts.values()].filter((n) => n > 1).length;
    expect(duplicates).toBe(0);
    const missing = acked.filter((a) => counts.get(`${a.deviceId}@${a.fixTime}`) !== 1);
    expect(missing).toEqual([]);

    // Every fix and every feed event reached the receiver at least once.
    const feedIds = async (key: string): Promise<string[]> => {
      const ids: string[] = [];
      for (let cursor: string | null = null; ; ) {
        const page: { json: Json } = await api('api2', key, 'GET', `/v1/feed?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
        ids.push(...page.json.data.map((e: Json) => e.id));
        if (!page.json.pagination.has_more) return ids;
        cursor = page.json.pagination.next_cursor;
      }
    };
    let feed: string[] = [];
    const fixesAtReceiver = () =>
      new Set(rx.received.filter((r) => r.json.event === 'position.updated').map((r) => `${r.json.device_id}@${Date.parse(r.json.position.timestamp)}`));
    await until(
      async () => {
        feed = [...(await feedIds(keys.a)), ...(await feedIds(keys.b))];
        const fixes = fixesAtReceiver();
        const events = new Set(rx.received.map((r) => r.json.event_id));
        return acked.every((a) => fixes.has(`${a.deviceId}@${a.fixTime}`)) && feed.every((id) => events.has(id));
      },
      'every acked fix and feed event at the receiver',
      120_000,
    );
    const byEventId = new Map<string, string>();
    for (const r of rx.received) {
      expect([...secrets.values()].some((secret) => signatureValid(r, secret))).toBe(true);
      const seen = byEventId.get(r.json.event_id);
      if (seen) expect(r.raw).toBe(seen); // a delivery sent again is the same body
      byEventId.set(r.json.event_id, r.raw);
    }

    // The plan holds across both API nodes: a full bucket (120) plus what it refilled meanwhile (1 a second).
    const granted = statuses.filter((s) => s === 200).length;
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(granted).toBeLessThanOrEqual(120 + Math.ceil(elapsedS) + 1);
    expect(granted).toBeGreaterThanOrEqual(118);
    const redelivered = rx.received.length - byEventId.size;
    console.log(
      `multi-node: fixes acked ${acked.length}, stored ${counts.size}, duplicates ${duplicates}; deliveries received ${rx.received.length} ` +
        `(${byEventId.size} distinct, ${redelivered} sent again), missing 0; hammer granted ${granted} of ${statuses.length} in ${elapsedS.toFixed(1)} s ` +
        `(plan: 120 + ${Math.ceil(elapsedS)} refilled); killed gw1 and ${killedWebhooks}, its customer taken over after ${takeoverS.toFixed(1)} s`,
    );
    await db.end();
  }, 300_000);
});
