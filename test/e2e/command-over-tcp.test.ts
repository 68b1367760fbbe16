/**
 * The whole platform, as an integrator sees a command: POST it for an offline unit, the unit
 * logs in over TCP and receives it, answers (corpus codec 12 reply #40), and a real local
 * receiver gets `command.sent` and then `command.succeeded` with the reply, signed like every
 * delivery; GET /v1/commands/{id} shows the same command.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
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
let rx: WebhookReceiver;
beforeAll(async () => {
  p = await startPlatformHarness();
  rx = await startWebhookReceiver();
});
afterAll(async () => {
  await p?.close();
  await rx?.close();
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
