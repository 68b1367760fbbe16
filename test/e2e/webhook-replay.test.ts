/**
 * A replay on a running platform, over its real HTTP API and a real local
 * receiver: POST .../replay sends the range's events again (signed, with their
 * original event_ids, as deliveries carrying the replay's id) while the
 * process stays up, and GET .../replays/{id} follows it to `done`. Replays
 * used to wait for the next restart: delivery's first look at the open
 * replays left it believing one ran forever.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';
import { createCustomer } from '../../core/commands/customers.js';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { startPlatformHarness, type Json, type PlatformHarness } from '../support/platform-harness.js';
import { positionRecorded } from '../support/store-events.js';
import { until } from '../support/wait.js';
import { signatureValid, startWebhookReceiver, type Received, type WebhookReceiver } from '../support/webhook-receiver.js';

let p: PlatformHarness;
let rx: WebhookReceiver;
let webhook: { id: string; secret: string };
/** The live deliveries of the fixes: one before the replayed range, FIXES in it. */
let live: Received[];
const FIXES = 5;
const T0 = Math.floor(Date.now() / 1000) * 1000 - 10 * 60_000;
const range = { from: new Date(T0).toISOString(), to: new Date(T0 + FIXES * 1000).toISOString() };
const eventIdOf = (r: Received) => r.headers['x-service-event-id'] as string;

beforeAll(async () => {
  p = await startPlatformHarness();
  rx = await startWebhookReceiver();
  const deviceId = await p.registerDevice({ imei: imeiFrom('35209807700001') });
  const created = await p.api('POST', '/v1/webhooks', { url: rx.url, events: ['position.updated'] });
  expect(created.status).toBe(201);
  webhook = { id: created.json.id, secret: created.json.secret };
  const device = { customerId: p.customerId, deviceId };
  const times = [T0 - 60_000, ...Array.from({ length: FIXES }, (_, i) => T0 + i * 1000)];
  await p.platform.store.appendToStream(streams.telemetry(deviceId), times.map((t) => positionRecorded(device, t)));
  live = (await rx.waitFor(times.length)).slice(0);
}, 60_000);

afterAll(async () => {
  await rx.close();
  await p.close();
});

/** Requests a replay of `range` and waits, 10 s at most, for the receiver to get `count` more requests. */
async function replay(body: Record<string, unknown>, count: number): Promise<{ replayId: string; got: Received[] }> {
  const before = rx.received.length;
  const res = await p.api('POST', `/v1/webhooks/${webhook.id}/replay`, { ...range, ...body });
  expect(res.status, JSON.stringify(res.json)).toBe(202);
  await until(() => rx.received.length >= before + count, `${count} replayed deliveries (got ${rx.received.length - before})`, 10_000);
  return { replayId: res.json.replay_id, got: rx.received.slice(before) };
}

describe('webhook replays on a running platform', () => {
  it("sends the range's events again while the process runs, signed, with their event_ids, as deliveries of the replay", async () => {
    const { replayId, got } = await replay({}, FIXES);
    const inRange = live.slice(1);
    expect(got.map(eventIdOf).sort()).toEqual(inRange.map(eventIdOf).sort());
    for (const r of got) {
      expect(signatureValid(r, webhook.secret)).toBe(true);
      const original = inRange.find((o) => eventIdOf(o) === eventIdOf(r))!;
      expect(r.raw).toBe(original.raw);
      expect(r.headers['x-service-delivery-id']).not.toBe(original.headers['x-service-delivery-id']);
      const delivery = await p.api('GET', `/v1/webhooks/${webhook.id}/deliveries/${r.headers['x-service-delivery-id'] as string}`);
      expect(delivery.status).toBe(200);
      expect(delivery.json).toMatchObject({ replay_id: replayId, event_id: eventIdOf(r) });
    }

    let shown: Json = null;
    await until(async () => {
      shown = await p.api('GET', `/v1/webhooks/${webhook.id}/replays/${replayId}`);
      return shown.json.state === 'done';
    }, 'the replay done');
    expect(shown.status).toBe(200);
    expect(shown.json).toEqual({
      replay_id: replayId,
      webhook_id: webhook.id,
      ...range,
      events: null,
      state: 'done',
      deliveries_queued: FIXES,
      requested_at: expect.any(String),
      completed_at: expect.any(String),
    });
    expect(Date.parse(shown.json.completed_at)).toBeGreaterThanOrEqual(Date.parse(shown.json.requested_at));
  });

  it('runs a replay asked for while another is under way after it, not never', async () => {
    const before = rx.received.length;
    const first = await p.api('POST', `/v1/webhooks/${webhook.id}/replay`, range);
    const second = await p.api('POST', `/v1/webhooks/${webhook.id}/replay`, { ...range, events: ['position.*'] });
    expect([first.status, second.status]).toEqual([202, 202]);
    await until(() => rx.received.length >= before + 2 * FIXES, `both replays' deliveries (got ${rx.received.length - before})`, 10_000);
    for (const r of [first, second]) {
      await until(async () => (await p.api('GET', `/v1/webhooks/${webhook.id}/replays/${r.json.replay_id}`)).json.state === 'done', 'done');
    }
    expect((await p.api('GET', `/v1/webhooks/${webhook.id}/replays/${second.json.replay_id}`)).json).toMatchObject({ events: ['position.*'], deliveries_queued: FIXES });
  });

  it("answers 404 problem+json for another customer's replay, and for an unknown one", async () => {
    const { replayId } = await replay({}, FIXES);
    const other = await createCustomer(p.platform.store, systemClock, { name: 'Other Fleet', plan: 'pro' });
    const asOther = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(p.base + path, {
        method,
        headers: { authorization: `Bearer ${other.api_key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, type: res.headers.get('content-type') ?? '', json: (await res.json()) as Json };
    };
    const own = await asOther('POST', '/v1/webhooks', { url: rx.url, events: ['device.*'] });
    expect(own.status).toBe(201);
    for (const path of [`/v1/webhooks/${webhook.id}/replays/${replayId}`, `/v1/webhooks/${own.json.id}/replays/${replayId}`]) {
      const res = await asOther('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.type).toMatch(/^application\/problem\+json/);
      expect(res.json).toMatchObject({ status: 404, code: 'not_found' });
      expect(JSON.stringify(res.json)).not.toContain(p.customerId);
    }
    const unknown = await p.api('GET', `/v1/webhooks/${webhook.id}/replays/rpl_00000000000000000000000000`);
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ code: 'not_found' });
  });
});
