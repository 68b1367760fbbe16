/**
 * A 410 stops an endpoint at once, on a running platform with a real local
 * receiver: an endpoint with a backlog on several devices (several lanes, so
 * several attempts in flight) gets no request after the receiver's first 410,
 * and is disabled. Before, the failed delivery freed its lane before the
 * endpoint was disabled by an event of its own, and more requests followed.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { startPlatformHarness, type Json, type PlatformHarness } from '../support/platform-harness.js';
import { positionRecorded } from '../support/store-events.js';
import { until } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const DEVICES = 4;
const FIXES_PER_DEVICE = 15;

let p: PlatformHarness;
let rx: WebhookReceiver;

beforeAll(async () => {
  p = await startPlatformHarness();
  rx = await startWebhookReceiver();
}, 60_000);

afterAll(async () => {
  await rx.close();
  await p.close();
});

describe('a receiver that answers 410', () => {
  it('gets no request after its first 410, on any lane of the endpoint, and the endpoint is disabled', async () => {
    const devices: string[] = [];
    for (let i = 0; i < DEVICES; i++) devices.push(await p.registerDevice({ imei: imeiFrom(`3520980780000${i}`) }));
    const created = await p.api('POST', '/v1/webhooks', { url: rx.url, events: ['position.updated'] });
    expect(created.status).toBe(201);
    const webhookId = created.json.id as string;

    // Every request is held until each lane has one in flight (a lane sends one at a time), then all are
    // answered 410: whatever reaches the receiver after that was started after delivery knew of a 410.
    const held: ServerResponse[] = [];
    let requestsBeforeGone: number | null = null;
    rx.respond((_r, res) => {
      if (requestsBeforeGone !== null) return 410;
      held.push(res);
      if (held.length === DEVICES) {
        requestsBeforeGone = rx.received.length;
        for (const h of held) h.writeHead(410, { 'content-type': 'text/plain' }).end('gone');
      }
      return null;
    });
    const t0 = Date.now() - 10 * 60_000;
    for (const deviceId of devices) {
      const device = { customerId: p.customerId, deviceId };
      await p.platform.store.appendToStream(streams.telemetry(deviceId), Array.from({ length: FIXES_PER_DEVICE }, (_, i) => positionRecorded(device, t0 + i * 1000)));
    }
    await until(() => requestsBeforeGone !== null, `a request in flight on each of the ${DEVICES} lanes (got ${rx.received.length})`);
    expect(requestsBeforeGone).toBe(DEVICES);

    // Settled: the endpoint is disabled, and every request the receiver got has its outcome recorded.
    let deliveries: Json[] = [];
    await until(async () => {
      const endpoint = await p.api('GET', `/v1/webhooks/${webhookId}`);
      deliveries = (await p.api('GET', `/v1/webhooks/${webhookId}/deliveries?limit=200`)).json.data;
      const attempted = deliveries.reduce((n: number, d: Json) => n + d.attempts, 0);
      return endpoint.json.status === 'disabled_by_platform' && deliveries.length === DEVICES * FIXES_PER_DEVICE && attempted === rx.received.length;
    }, 'the endpoint disabled and every attempt recorded');

    expect(rx.received.length, 'requests reaching the receiver after its first 410').toBe(requestsBeforeGone);
    expect((await p.api('GET', `/v1/webhooks/${webhookId}`)).json).toMatchObject({ enabled: false, status: 'disabled_by_platform', disabled_reason: 'gone' });
    const disabled = (await p.platform.store.readStream(streams.webhook(webhookId))).filter((e) => e.type === 'WebhookEndpointDisabled');
    expect(disabled).toHaveLength(1);
    // The 410s failed; the backlog waits, unsent, for the endpoint to be enabled again.
    const failed = deliveries.filter((d: Json) => d.state === 'failed');
    expect(failed.map((d: Json) => d.last_status)).toEqual(Array(DEVICES).fill(410));
    expect(deliveries.filter((d: Json) => d.state === 'pending' && d.attempts === 0)).toHaveLength(DEVICES * (FIXES_PER_DEVICE - 1));
  });
});
