/**
 * The whole platform: a command with ttl_s 1 for a unit that never logs in becomes `expired`
 * (the projections role's expiry sweep), and a real local receiver gets `command.expired`,
 * signed like every delivery, with the command as GET /v1/commands/{id} shows it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { until } from '../support/device-login.js';
import { startPlatformHarness, type PlatformHarness } from '../support/platform-harness.js';
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
