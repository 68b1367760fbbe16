/**
 * Device commands through the whole platform, as an integrator sees them on a real local
 * webhook receiver, every delivery signed, each payload's command the one GET /v1/commands/{id}
 * shows:
 * - a command with ttl_s 1 for a unit that never logs in becomes `expired` (the projections
 *   role's expiry sweep) and `command.expired` is delivered;
 * - a command queued for an offline unit is written when it logs in over TCP, the unit answers
 *   (corpus codec 12 reply #40), and `command.sent` then `command.succeeded` with the reply arrive.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { protocols } from '../../gateway/protocols/index.js';
import { teltonikaEncoder } from '../simulator/encoders/teltonika.js';
import { nextFrame } from '../support/command-unit.js';
import { loadFrames } from '../support/conformance.js';
import { login, until } from '../support/device-login.js';
import { startPlatformHarness, type PlatformHarness } from '../support/platform-harness.js';
import { TcpClient } from '../support/tcp-client.js';
import { signatureValid, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let p: PlatformHarness;
/** Each test's own receiver, so it counts only its own deliveries. */
let rx: WebhookReceiver;
beforeAll(async () => {
  p = await startPlatformHarness();
});
beforeEach(async () => {
  rx = await startWebhookReceiver();
});
afterEach(async () => {
  await rx?.close();
});
afterAll(async () => {
  await p?.close();
});

it('expires a queued command without a login and delivers command.expired, signed', async () => {
  const hook = await p.api('POST', '/v1/webhooks', { url: rx.url, events: ['command.expired'] });
  expect(hook.status).toBe(201);
  const deviceId = await p.registerDevice({ imei: imeiFrom('35209807600077'), model: 'FMB920' });
  const queued = await p.api('POST', `/v1/devices/${deviceId}/commands`, { type: 'engine_stop', ttl_s: 1 });
  expect(queued.status).toBe(202);
  expect(queued.json).toMatchObject({ status: 'queued', waiting_for: 'vehicle_stopped' });

  await until(async () => (await p.api('GET', `/v1/commands/${queued.json.id}`)).json.status === 'expired', 20_000, 'the command expired');
  const [delivery] = await rx.waitFor(1);
  expect(signatureValid(delivery!, hook.json.secret)).toBe(true);
  expect(delivery!.json).toMatchObject({ event: 'command.expired', device_id: deviceId });
  expect(delivery!.json.command).toEqual((await p.api('GET', `/v1/commands/${queued.json.id}`)).json);
  expect(delivery!.json.command).toMatchObject({ status: 'expired', error: 'expired', sent_at: null, waiting_for: null });
  const list = await p.api('GET', `/v1/devices/${deviceId}/commands?status=expired`);
  expect(list.json.data.map((c: { id: string }) => c.id)).toEqual([queued.json.id]);
});

it('sends a command queued for an offline unit at its login and delivers command.succeeded with the reply, signed', async () => {
  const hook = await p.api('POST', '/v1/webhooks', { url: rx.url, events: ['command.sent', 'command.succeeded'] });
  expect(hook.status).toBe(201);
  const imei = imeiFrom('35209307600088');
  const deviceId = await p.registerDevice({ imei, model: 'FMB920' });
  const queued = await p.api('POST', `/v1/devices/${deviceId}/commands`, { type: 'custom', params: { text: 'getver' } });
  expect(queued.status).toBe(202);
  expect(queued.json).toMatchObject({ status: 'queued', sent_at: null });

  const client = await TcpClient.open(p.platform.ports.teltonika!);
  await login(client, teltonikaEncoder, { imei, terminalId: imei.slice(3), serial: 1 });
  const received = await nextFrame(client, protocols.teltonika);
  expect(received.toString('latin1')).toContain('getver');
  const reply = loadFrames()[40]!;
  client.send(Buffer.from(reply.hex, 'hex'));

  await until(async () => (await p.api('GET', `/v1/commands/${queued.json.id}`)).json.status === 'succeeded', 20_000, 'the command succeeded');
  const deliveries = await rx.waitFor(2);
  for (const d of deliveries) expect(signatureValid(d, hook.json.secret)).toBe(true);
  expect(deliveries.map((d) => d.json.event)).toEqual(['command.sent', 'command.succeeded']);
  const succeeded = deliveries[1]!.json;
  expect(succeeded).toMatchObject({ device_id: deviceId, command: { id: queued.json.id, status: 'succeeded', error: null } });
  expect(succeeded.command.response).toEqual({ text: '#FM2=262032761721396,26203,07.02.05', result_code: null, raw_hex: reply.hex });
  expect(succeeded.command).toEqual((await p.api('GET', `/v1/commands/${queued.json.id}`)).json);
  client.close();
});
