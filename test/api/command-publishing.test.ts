/**
 * Command events published: command.expired and command.succeeded reach a real local webhook
 * receiver signed like every delivery, with the command as payload, and the live stream carries
 * them (live and on resume) to a credential with commands:read.
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WEBHOOK_FAMILIES } from '../../api/schemas/webhooks.js';
import { COMMAND_KINDS } from '../../core/alarms.js';
import { markSent, recordReply } from '../../core/commands/device-commands.js';
import { imeiFrom } from '../../core/imei.js';
import { silentLogger } from '../../core/logger.js';
import { verifyWebhook } from '../../webhook-delivery/signature.js';
import { startCommandExpiry } from '../../projections/commands/expiry.js';
import { bearer, closeListening, listenOnLoopback, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { openSse, type SseClient } from '../support/sse-client.js';
import { recordPosition } from '../support/store-events.js';
import { startWebhookReceiver, type Received, type WebhookReceiver } from '../support/webhook-receiver.js';

let h: ApiHarness;
let base: string;
let rx: WebhookReceiver;
const clients: SseClient[] = [];
beforeEach(async () => {
  h = await startApiHarness({ settings: { streamKeepAliveMs: 100 } });
  base = await listenOnLoopback(h);
  rx = await startWebhookReceiver();
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await closeListening(h);
  await rx.close();
});

async function setUp() {
  const { apiKey, customerId } = await h.newCustomer();
  const device = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: bearer(apiKey), payload: { imei: imeiFrom('35693803564380'), model: 'FMB920', name: 'Van 7', protocol: 'teltonika' } });
  const hook = await h.app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(apiKey), payload: { url: rx.url, events: ['command.*'] } });
  expect([device.statusCode, hook.statusCode]).toEqual([201, 201]);
  return { apiKey, customerId, deviceId: device.json().id as string, secret: hook.json().secret as string };
}

const queue = async (apiKey: string, deviceId: string, payload: Record<string, unknown>) => {
  const res = await h.app.inject({ method: 'POST', url: `/v1/devices/${deviceId}/commands`, headers: bearer(apiKey), payload });
  expect(res.statusCode).toBe(202);
  return res.json();
};
const getCommand = async (apiKey: string, id: string) => (await h.app.inject({ method: 'GET', url: `/v1/commands/${id}`, headers: bearer(apiKey) })).json();

/** Signed with the endpoint's secret at the delivery's timestamp, which the harness's clock gives. */
const signedWith = (r: Received, secret: string) =>
  verifyWebhook({ secret, header: r.headers['x-service-signature'] as string, timestamp: r.headers['x-service-timestamp'] as string, body: r.raw, nowS: Math.floor(h.clock.now() / 1000) });

describe('command webhooks', () => {
  it('command.expired: a command never sent reaches the receiver signed, the command as payload', async () => {
    const { apiKey, deviceId, secret } = await setUp();
    const expiry = startCommandExpiry({ store: h.store, clock: h.clock, db: h.readModelDb, log: silentLogger, intervalMs: 20 });
    try {
      const command = await queue(apiKey, deviceId, { type: 'reboot', ttl_s: 1 });
      h.clock.advance(2000);
      const [delivery] = await rx.waitFor(1);
      expect(signedWith(delivery!, secret)).toBe(true);
      expect(signedWith(delivery!, 'whsec_not_the_secret')).toBe(false);
      expect(delivery!.json).toMatchObject({ event: 'command.expired', device_id: deviceId, device_name: 'Van 7', severity: 'low', position: null });
      expect(delivery!.json.command).toEqual(await getCommand(apiKey, command.id));
      expect(delivery!.json.command).toMatchObject({ id: command.id, status: 'expired', sent_at: null });
    } finally {
      await expiry.stop();
    }
  });

  it('command.sent, then command.succeeded with the reply', async () => {
    const { apiKey, deviceId, secret } = await setUp();
    const command = await queue(apiKey, deviceId, { type: 'engine_resume' });
    const ref = { device_id: deviceId, command_id: command.id };
    await markSent(h.store, h.clock, ref);
    h.clock.advance(1500);
    await recordReply(h.store, h.clock, { ...ref, reply: { outcome: 'succeeded', text: 'DOUT1:0 Timeout:INFINITY', result_code: null, raw_hex: '444f5554313a30' } });
    const received = await rx.waitFor(2);
    expect(received.map((r) => r.json.event)).toEqual(['command.sent', 'command.succeeded']);
    expect(received.every((r) => signedWith(r, secret))).toBe(true);
    expect(received[1]!.json.command).toMatchObject({
      status: 'succeeded',
      response: { text: 'DOUT1:0 Timeout:INFINITY', result_code: null, raw_hex: '444f5554313a30' },
      completed_at: '2026-11-22T12:00:01.500Z',
    });
    expect(new Set(received.map((r) => r.json.event_id)).size).toBe(2);
  });
});

describe('command payloads against their documented schema', () => {
  it('a delivered command.succeeded and a test sample of every command kind match CommandPayload', async () => {
    const { apiKey, deviceId } = await setUp();
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(WEBHOOK_FAMILIES.find((f) => f.name === 'CommandPayload')!.schema);
    const command = await queue(apiKey, deviceId, { type: 'custom', params: { text: 'getver' } });
    const ref = { device_id: deviceId, command_id: command.id };
    await markSent(h.store, h.clock, ref);
    await recordReply(h.store, h.clock, { ...ref, reply: { outcome: 'succeeded', text: 'Ver:03.27.07', result_code: null, raw_hex: '5665723a' } });
    const webhookId = (await h.app.inject({ method: 'GET', url: '/v1/webhooks', headers: bearer(apiKey) })).json().data[0].id;
    for (const kind of COMMAND_KINDS) {
      const test = await h.app.inject({ method: 'POST', url: `/v1/webhooks/${webhookId}/test`, headers: bearer(apiKey), payload: { event: kind } });
      expect(test.statusCode).toBe(200);
    }
    const received = await rx.waitFor(2 + COMMAND_KINDS.length);
    for (const r of received) expect([r.json.event, validate(r.json) ? 'valid' : ajv.errorsText(validate.errors)]).toEqual([r.json.event, 'valid']);
    expect(received.filter((r) => r.json.test).map((r) => [r.json.event, r.json.command.status])).toEqual(COMMAND_KINDS.map((k) => [k, k.slice(8)]));
  });
});

describe('command events on /v1/stream', () => {
  it('streams command.sent live to a commands:read credential, and replays it after Last-Event-ID', async () => {
    const { apiKey, customerId, deviceId } = await setUp();
    const reader = await h.newKey(customerId, ['commands:read']);
    const live = await openSse(`${base}/v1/stream`, bearer(reader));
    clients.push(live);
    expect(live.status).toBe(200);
    const command = await queue(apiKey, deviceId, { type: 'position_request' });
    await markSent(h.store, h.clock, { device_id: deviceId, command_id: command.id });
    const message = await live.next((m) => m.event === 'command');
    const data = JSON.parse(message.data);
    expect(data).toMatchObject({ event: 'command.sent', device_id: deviceId, device_name: 'Van 7', command: { id: command.id, status: 'sent' } });
    const [webhook] = await rx.waitFor(1);
    expect(data.event_id).toBe(webhook!.json.event_id);

    const resumed = await openSse(`${base}/v1/stream`, { ...bearer(reader), 'last-event-id': '0/0' });
    clients.push(resumed);
    const replayed = await resumed.next((m) => m.event === 'command');
    expect(replayed.id).toBe(message.id);
    expect(JSON.parse(replayed.data)).toEqual(data);
    const positionsOnly = await h.newKey(customerId, ['positions:read']);
    const resumedWithout = await openSse(`${base}/v1/stream`, { ...bearer(positionsOnly), 'last-event-id': '0/0' });
    clients.push(resumedWithout);
    // A fix after the command: a stream without commands:read replays it first, the command never.
    await recordPosition(h, { customerId, deviceId }, h.clock.now());
    expect((await resumedWithout.next((m) => m.event !== null)).event).toBe('position');
  });
});
