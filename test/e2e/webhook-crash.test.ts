/**
 * Webhook durability: the platform (as users start it) is killed with
 * SIGKILL while its receiver is down and deliveries are queued and failing,
 * then restarted; once the receiver is back, every event of the feed and
 * every acknowledged fix reaches it at least once.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runSimulation } from '../simulator/run.js';
import { until } from '../support/device-login.js';
import { MAIN, platformEnv, startPlatformProcess, type PlatformProcess } from '../support/platform-process.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-webhook-crash-'));
let server: PlatformProcess | null = null;
let rx: WebhookReceiver | null = null;

afterAll(async () => {
  await server?.stop('SIGKILL');
  await rx?.close();
  rmSync(dir, { recursive: true, force: true });
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe('webhooks across a kill -9', () => {
  it('delivers every feed event and every acknowledged fix at least once after a SIGKILL with the receiver down', async () => {
    const { env, ports } = await platformEnv(join(dir, 'data'));
    const created = spawnSync(process.execPath, [MAIN, 'customer', 'create', '--name', 'Crash Hooks', '--plan', 'pro', '--json'], { env, encoding: 'utf8' });
    expect(created.status, created.stderr).toBe(0);
    const { api_key: apiKey } = JSON.parse(created.stdout) as { api_key: string };
    const base = `http://127.0.0.1:${ports.http}`;
    const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> => {
      const res = await fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, json: res.status === 204 ? {} : await res.json() };
    };

    server = await startPlatformProcess(env);
    rx = await startWebhookReceiver();
    const hook = await api('POST', '/v1/webhooks', { url: rx.url, events: ['*'] });
    expect(hook.status).toBe(201);
    await rx.close(); // down: every attempt is refused and queued for a retry

    const acked: Array<{ deviceId: string; fixTime: number }> = [];
    await runSimulation({
      protocol: 'teltonika',
      host: '127.0.0.1',
      port: ports.teltonika,
      devices: 5,
      intervalMs: 100,
      durationS: 1,
      pointsPerFrame: 2,
      ackTimeoutMs: 5000,
      api: { url: base, apiKey },
      onAck: (device, points) => {
        for (const p of points) acked.push({ deviceId: device.deviceId!, fixTime: p.fixTime });
      },
    });
    expect(acked.length).toBeGreaterThan(0);
    // Deliveries are queued and the first attempts fail before the kill.
    // Deliveries are listed newest first, and the failed ones are the oldest of each device: look through them all.
    const anyFailed = async (): Promise<boolean> => {
      for (let cursor: string | null = null; ; ) {
        const page: { json: Json } = await api('GET', `/v1/webhooks/${hook.json.id}/deliveries?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
        if (page.json.data.some((d: Json) => d.attempts > 0)) return true;
        if (!page.json.pagination.has_more) return false;
        cursor = page.json.pagination.next_cursor;
      }
    };
    await until(anyFailed, 20_000, 'a failed attempt', 200);
    await server.stop('SIGKILL');
    await rx.reopen();
    server = await startPlatformProcess(env);

    const feedIds = async (): Promise<string[]> => {
      const ids: string[] = [];
      for (let cursor: string | null = null; ; ) {
        const page: { json: Json } = await api('GET', `/v1/feed?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
        ids.push(...page.json.data.map((e: Json) => e.id));
        if (!page.json.pagination.has_more) return ids;
        cursor = page.json.pagination.next_cursor;
      }
    };

    // A lane's first failed delivery is retried 5 s after its failure (killed before that), then the lane follows.
    const fixKey = (deviceId: string, iso: string) => `${deviceId}@${Date.parse(iso)}`;
    let feed: string[] = [];
    await until(
      async () => {
        feed = await feedIds();
        const fixes = new Set(rx!.received.filter((r) => r.json.event === 'position.updated').map((r) => fixKey(r.json.device_id, r.json.position.timestamp)));
        const events = new Set(rx!.received.map((r) => r.json.event_id));
        return acked.every((a) => fixes.has(`${a.deviceId}@${a.fixTime}`)) && feed.every((id) => events.has(id));
      },
      60_000,
      'every fix and feed event at the receiver',
      // Each check reads the whole feed: twice a second stays far inside the plan's request rate.
      500,
    );
    expect(feed.length + acked.length).toBeGreaterThan(0);
  }, 120_000);
});
