/** Device commands over the API: queue, read, list, cancel, command types, Idempotency-Key, tenant isolation, expiry. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { markSent } from '../../core/commands/device-commands.js';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { startCommandExpiry, type CommandExpiry } from '../../projections/commands/expiry.js';
import { silentLogger } from '../../core/logger.js';
import { bearer, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { ResponseValidator, expectDocumented, loadOpenApi } from '../support/openapi.js';
import { until } from '../support/wait.js';

let h: ApiHarness;
let doc: ResponseValidator;
let expiry: CommandExpiry | null = null;
beforeEach(async () => {
  h = await startApiHarness();
  doc = new ResponseValidator(await loadOpenApi(h.app));
});
afterEach(async () => {
  await expiry?.stop();
  expiry = null;
  await h.close();
});

let imeis = 0;
async function customerWithDevice(protocol: 'teltonika' | 'gt06' | 'jt808' = 'teltonika') {
  const { apiKey, customerId } = await h.newCustomer();
  const res = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: bearer(apiKey), payload: { imei: imeiFrom(`35693803${String(++imeis).padStart(6, '0')}`), model: 'FMB920', protocol } });
  expect(res.statusCode).toBe(201);
  return { apiKey, customerId, deviceId: res.json().id as string };
}

function post(apiKey: string, deviceId: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) {
  return h.app.inject({ method: 'POST', url: `/v1/devices/${deviceId}/commands`, headers: { ...bearer(apiKey), ...headers }, payload });
}

const queuedEvents = async (deviceId: string) => (await h.store.readStream(streams.commands(deviceId))).filter((e) => e.type === 'DeviceCommandQueued');

describe('POST /v1/devices/{id}/commands', () => {
  it('answers 202 with the queued command, which GET /v1/commands/{id} returns', async () => {
    const { apiKey, deviceId } = await customerWithDevice();
    const res = await post(apiKey, deviceId, { type: 'set_report_interval', params: { interval_s: 60 } });
    expect(res.statusCode).toBe(202);
    expectDocumented(doc, 'POST', '/v1/devices/{id}/commands', res);
    const body = res.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^cmd_[0-9a-z]{26}$/),
      device_id: deviceId,
      type: 'set_report_interval',
      params: { interval_s: 60 },
      status: 'queued',
      waiting_for: null,
      created_at: '2026-11-22T12:00:00.000Z',
      sent_at: null,
      acknowledged_at: null,
      completed_at: null,
      expires_at: '2026-11-23T12:00:00.000Z',
      response: null,
      error: null,
    });
    expect(res.headers.location).toBe(`/v1/commands/${body.id}`);
    const get = await h.app.inject({ method: 'GET', url: `/v1/commands/${body.id}`, headers: bearer(apiKey) });
    expect(get.statusCode).toBe(200);
    expectDocumented(doc, 'GET', '/v1/commands/{id}', get);
    expect(get.json()).toEqual(body);
  });

  it('holds an engine stop for the vehicle to stop, 300 s to live, unless when is now', async () => {
    const { apiKey, deviceId } = await customerWithDevice();
    const held = (await post(apiKey, deviceId, { type: 'engine_stop' })).json();
    expect(held).toMatchObject({ status: 'queued', waiting_for: 'vehicle_stopped', expires_at: '2026-11-22T12:05:00.000Z' });
    const now = (await post(apiKey, deviceId, { type: 'engine_stop', params: { when: 'now' } })).json();
    expect(now).toMatchObject({ status: 'queued', waiting_for: null, params: { when: 'now' } });
  });

  it('the same Idempotency-Key twice gives one command, 202 both times; another body under it is a 422', async () => {
    const { apiKey, deviceId } = await customerWithDevice();
    const key = { 'idempotency-key': 'order-4711-cut' };
    const first = await post(apiKey, deviceId, { type: 'reboot' }, key);
    const second = await post(apiKey, deviceId, { type: 'reboot' }, key);
    expect([first.statusCode, second.statusCode]).toEqual([202, 202]);
    expect(second.json()).toEqual(first.json());
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await queuedEvents(deviceId)).toHaveLength(1);

    const other = await post(apiKey, deviceId, { type: 'position_request' }, key);
    expect(other.statusCode).toBe(422);
    expect(other.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(other.json()).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    expectDocumented(doc, 'POST', '/v1/devices/{id}/commands', other);
    expect(await queuedEvents(deviceId)).toHaveLength(1);

    const tooLong = await post(apiKey, deviceId, { type: 'reboot' }, { 'idempotency-key': 'k'.repeat(256) });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json()).toMatchObject({ code: 'validation_failed' });
    expect(tooLong.json().errors[0].pointer).toMatch(/idempotency-key/);
    expect(await queuedEvents(deviceId)).toHaveLength(1);
  });

  it("keys are per customer: another customer's same key makes its own command", async () => {
    const a = await customerWithDevice();
    const b = await customerWithDevice();
    const key = { 'idempotency-key': 'same-key' };
    const ra = await post(a.apiKey, a.deviceId, { type: 'reboot' }, key);
    const rb = await post(b.apiKey, b.deviceId, { type: 'reboot' }, key);
    expect([ra.statusCode, rb.statusCode]).toEqual([202, 202]);
    expect(rb.json().id).not.toBe(ra.json().id);
  });

  it("another customer's device is a 404, and nothing is queued", async () => {
    const owner = await customerWithDevice();
    const stranger = await h.newCustomer('Other Ltd');
    const res = await post(stranger.apiKey, owner.deviceId, { type: 'reboot' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 'not_found' });
    for (const url of [`/v1/devices/${owner.deviceId}/commands`, `/v1/devices/${owner.deviceId}/command-types`]) {
      expect((await h.app.inject({ method: 'GET', url, headers: bearer(stranger.apiKey) })).statusCode).toBe(404);
    }
    expect(await queuedEvents(owner.deviceId)).toHaveLength(0);
  });

  it("another customer's command is a 404 to GET and DELETE", async () => {
    const owner = await customerWithDevice();
    const id = (await post(owner.apiKey, owner.deviceId, { type: 'reboot' })).json().id;
    const stranger = await h.newCustomer('Other Ltd');
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await h.app.inject({ method, url: `/v1/commands/${id}`, headers: bearer(stranger.apiKey) });
      expect(res.statusCode).toBe(404);
    }
    expect((await h.app.inject({ method: 'GET', url: `/v1/commands/${id}`, headers: bearer(owner.apiKey) })).json().status).toBe('queued');
  });

  it('a type the protocol lacks is a 400 naming the type and the protocol', async () => {
    const { apiKey, deviceId } = await customerWithDevice('gt06');
    const res = await post(apiKey, deviceId, { type: 'text', params: { message: 'Call the office' } });
    expect(res.statusCode).toBe(400);
    expectDocumented(doc, 'POST', '/v1/devices/{id}/commands', res);
    expect(res.json()).toMatchObject({ code: 'command_type_unsupported', errors: [{ pointer: '/body/type' }] });
    expect(res.json().detail).toContain('gt06 protocol has no command text');
  });

  it('refuses params out of range and a ttl_s over 7 days, pointing at the field', async () => {
    const { apiKey, deviceId } = await customerWithDevice();
    const interval = await post(apiKey, deviceId, { type: 'set_report_interval', params: { interval_s: 2 } });
    expect(interval.statusCode).toBe(400);
    expect(interval.json()).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/body/params/interval_s' }] });
    const ttl = await post(apiKey, deviceId, { type: 'reboot', ttl_s: 7 * 86_400 + 1 });
    expect(ttl.statusCode).toBe(400);
    expect(ttl.json()).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/body/ttl_s' }] });
    const unknown = await post(apiKey, deviceId, { type: 'self_destruct' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().errors[0].pointer).toBe('/body/type');
  });

  it('needs commands:write; commands:read only reads', async () => {
    const { apiKey, customerId, deviceId } = await customerWithDevice();
    const id = (await post(apiKey, deviceId, { type: 'reboot' })).json().id;
    const reader = await h.newKey(customerId, ['commands:read']);
    expect((await post(reader, deviceId, { type: 'reboot' })).statusCode).toBe(403);
    expect((await h.app.inject({ method: 'DELETE', url: `/v1/commands/${id}`, headers: bearer(reader) })).statusCode).toBe(403);
    expect((await h.app.inject({ method: 'GET', url: `/v1/commands/${id}`, headers: bearer(reader) })).statusCode).toBe(200);
    const devicesOnly = await h.newKey(customerId, ['devices:write']);
    expect((await h.app.inject({ method: 'GET', url: `/v1/commands/${id}`, headers: bearer(devicesOnly) })).statusCode).toBe(403);
  });
});

describe('DELETE /v1/commands/{id}', () => {
  it('cancels a queued command; once sent it is a 409 command_not_cancellable', async () => {
    const { apiKey, deviceId } = await customerWithDevice();
    const queued = (await post(apiKey, deviceId, { type: 'reboot' })).json();
    const cancel = await h.app.inject({ method: 'DELETE', url: `/v1/commands/${queued.id}`, headers: bearer(apiKey) });
    expect(cancel.statusCode).toBe(200);
    expectDocumented(doc, 'DELETE', '/v1/commands/{id}', cancel);
    expect(cancel.json()).toMatchObject({ id: queued.id, status: 'cancelled', completed_at: '2026-11-22T12:00:00.000Z' });

    const other = (await post(apiKey, deviceId, { type: 'position_request' })).json();
    const sent = await markSent(h.store, h.clock, { device_id: deviceId, command_id: other.id });
    await h.waitFor(sent.position!);
    const refused = await h.app.inject({ method: 'DELETE', url: `/v1/commands/${other.id}`, headers: bearer(apiKey) });
    expect(refused.statusCode).toBe(409);
    expectDocumented(doc, 'DELETE', '/v1/commands/{id}', refused);
    expect(refused.json()).toMatchObject({ code: 'command_not_cancellable' });
    expect((await h.app.inject({ method: 'GET', url: `/v1/commands/${other.id}`, headers: bearer(apiKey) })).json().status).toBe('sent');
  });
});

describe('GET /v1/devices/{id}/commands', () => {
  it('lists newest first, in pages, filtered by status', async () => {
    const { apiKey, deviceId } = await customerWithDevice();
    const ids: string[] = [];
    for (const type of ['reboot', 'position_request', 'engine_resume']) {
      ids.push((await post(apiKey, deviceId, { type })).json().id);
      h.clock.advance(1000);
    }
    await h.app.inject({ method: 'DELETE', url: `/v1/commands/${ids[1]}`, headers: bearer(apiKey) });
    const list = (query: string) => h.app.inject({ method: 'GET', url: `/v1/devices/${deviceId}/commands${query}`, headers: bearer(apiKey) });

    const all = await list('');
    expect(all.statusCode).toBe(200);
    expectDocumented(doc, 'GET', '/v1/devices/{id}/commands', all);
    expect(all.json().data.map((c: { id: string }) => c.id)).toEqual([...ids].reverse());

    const first = (await list('?limit=2')).json();
    expect(first.data.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
    expect(first.pagination.has_more).toBe(true);
    const rest = (await list(`?limit=2&cursor=${first.pagination.next_cursor}`)).json();
    expect(rest).toMatchObject({ data: [{ id: ids[0] }], pagination: { has_more: false, next_cursor: null } });

    expect((await list('?status=cancelled')).json().data.map((c: { id: string }) => c.id)).toEqual([ids[1]]);
    expect((await list('?status=queued,cancelled')).json().data).toHaveLength(3);
    expect((await list('?status=lost')).statusCode).toBe(400);
    expect((await list(`?status=queued&cursor=${first.pagination.next_cursor}`)).json()).toMatchObject({ code: 'cursor_mismatch' });
  });
});

describe('GET /v1/devices/{id}/command-types', () => {
  it("lists the protocol's types with their params and the engine texts, a device override first", async () => {
    const { apiKey, deviceId } = await customerWithDevice('teltonika');
    const types = async () => (await h.app.inject({ method: 'GET', url: `/v1/devices/${deviceId}/command-types`, headers: bearer(apiKey) })).json();
    const before = await types();
    expect(before.protocol).toBe('teltonika');
    expect(before.data.map((t: { type: string }) => t.type)).toEqual(['engine_stop', 'engine_resume', 'reboot', 'position_request', 'set_report_interval', 'custom']);
    expect(before.data.find((t: { type: string }) => t.type === 'set_report_interval').params).toEqual([
      { name: 'interval_s', kind: 'integer', required: true, minimum: 5, maximum: 86_400, description: 'Seconds between reports' },
    ]);
    expect(before.data.find((t: { type: string }) => t.type === 'engine_stop')).toMatchObject({ text: 'setdigout 1', default_ttl_s: 300 });

    const patch = await h.app.inject({ method: 'PATCH', url: `/v1/devices/${deviceId}`, headers: bearer(apiKey), payload: { command_texts: { engine_stop: 'setdigout 1 60' } } });
    expect(patch.statusCode).toBe(200);
    expectDocumented(doc, 'PATCH', '/v1/devices/{id}', patch);
    expect(patch.json().command_texts).toEqual({ engine_stop: 'setdigout 1 60' });
    const after = await types();
    expect(after.data.find((t: { type: string }) => t.type === 'engine_stop').text).toBe('setdigout 1 60');
    expect(after.data.find((t: { type: string }) => t.type === 'engine_resume').text).toBe('setdigout 0');
    const res = await h.app.inject({ method: 'GET', url: `/v1/devices/${deviceId}/command-types`, headers: bearer(apiKey) });
    expectDocumented(doc, 'GET', '/v1/devices/{id}/command-types', res);
  });

  it('JT/T 808 has all seven types, text among them', async () => {
    const { apiKey, deviceId } = await customerWithDevice('jt808');
    const body = (await h.app.inject({ method: 'GET', url: `/v1/devices/${deviceId}/command-types`, headers: bearer(apiKey) })).json();
    expect(body.data.map((t: { type: string }) => t.type)).toContain('text');
    expect(body.data).toHaveLength(7);
  });
});

describe('expiry', () => {
  it('ttl_s 1: the command becomes expired without the unit ever logging in, and is never sent', async () => {
    const { apiKey, deviceId } = await customerWithDevice();
    expiry = startCommandExpiry({ store: h.store, clock: h.clock, db: h.readModelDb, log: silentLogger, intervalMs: 20 });
    const id = (await post(apiKey, deviceId, { type: 'reboot', ttl_s: 1 })).json().id;
    const status = async () => (await h.app.inject({ method: 'GET', url: `/v1/commands/${id}`, headers: bearer(apiKey) })).json();
    await expiry.sweep();
    expect((await status()).status).toBe('queued');
    h.clock.advance(2000);
    await until(async () => (await status()).status === 'expired', 'the command expired');
    expect(await status()).toMatchObject({ status: 'expired', error: 'expired', sent_at: null, completed_at: '2026-11-22T12:00:02.000Z' });
    const types = (await h.store.readStream(streams.commands(deviceId))).map((e) => e.type);
    expect(types).toEqual(['DeviceCommandQueued', 'DeviceCommandExpired']);
    expect((await markSent(h.store, h.clock, { device_id: deviceId, command_id: id }).catch((e: Error) => e)) as Error).toMatchObject({ code: 'command_not_sendable' });
  });

  it('two sweeps racing append one expiry', async () => {
    const { apiKey, deviceId } = await customerWithDevice();
    const id = (await post(apiKey, deviceId, { type: 'reboot', ttl_s: 1 })).json().id;
    h.clock.advance(1000);
    const a = startCommandExpiry({ store: h.store, clock: h.clock, db: h.readModelDb, log: silentLogger, intervalMs: 60_000 });
    const b = startCommandExpiry({ store: h.store, clock: h.clock, db: h.readModelDb, log: silentLogger, intervalMs: 60_000 });
    const [ea, eb] = await Promise.all([a.sweep(), b.sweep()]);
    await Promise.all([a.stop(), b.stop()]);
    expect(ea + eb).toBe(1);
    expect((await h.store.readStream(streams.commands(deviceId))).filter((e) => e.type === 'DeviceCommandExpired')).toHaveLength(1);
    await h.catchUp();
    expect((await h.app.inject({ method: 'GET', url: `/v1/commands/${id}`, headers: bearer(apiKey) })).json().status).toBe('expired');
  });
});
