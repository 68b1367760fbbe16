/** Webhook endpoint management over HTTP: the secret shown once, kind patterns, URL safety, tenants, scopes. */
import { afterEach, describe, expect, it } from 'vitest';
import { registerDevice } from '../../core/commands/devices.js';
import { randomUuid } from '../../core/ids.js';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { startApiHarness, type ApiHarness, type HarnessOptions } from '../support/api-harness.js';
import { ResponseValidator, expectDocumented, loadOpenApi } from '../support/openapi.js';

let h: ApiHarness;
let doc: ResponseValidator;
async function start(options: HarnessOptions = {}): Promise<void> {
  h = await startApiHarness(options);
  doc = new ResponseValidator(await loadOpenApi(h.app));
}
afterEach(async () => {
  await h.close();
});

const RECEIVER = 'https://hooks.example.com/fleet';
type Res = Awaited<ReturnType<ApiHarness['app']['inject']>>;

/** A client of one customer (or one key): every answer is checked against the OpenAPI document as it comes. */
function client(key: string) {
  const headers = { authorization: `Bearer ${key}` };
  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown): Promise<Res> => {
    const res = await h.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
    expectDocumented(doc, method, doc.pathOf(url), res);
    return res;
  };
  return {
    create: (payload: unknown) => call('POST', '/v1/webhooks', payload),
    get: (url: string) => call('GET', url),
    patch: (id: string, payload: unknown) => call('PATCH', `/v1/webhooks/${id}`, payload),
    del: (id: string) => call('DELETE', `/v1/webhooks/${id}`),
    rotate: (id: string, payload?: unknown) => call('POST', `/v1/webhooks/${id}/rotate-secret`, payload),
  };
}

async function customer(name = 'Acme Haulage') {
  const c = await h.newCustomer(name);
  return { ...c, ...client(c.apiKey) };
}

/** Every stored event, as the text a copy of the log would show. */
async function logText(): Promise<string> {
  const events = await h.store.readAll();
  return JSON.stringify(events.map((e) => ({ type: e.type, data: e.data, metadata: e.metadata })));
}

function pointers(res: Res): string[] {
  expect(res.statusCode).toBe(400);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  return (res.json().errors as Array<{ pointer: string }>).map((e) => e.pointer);
}

describe('POST /v1/webhooks', () => {
  it('creates an endpoint: 201, Location, no-store, the whsec_ secret once; GET and the log never show it', async () => {
    await start();
    const c = await customer();
    const res = await c.create({ url: RECEIVER, events: ['geofence.*', 'alarm.*'], description: 'Dispatch' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(res.headers.location).toBe(`/v1/webhooks/${body.id}`);
    expect(body).toEqual({
      id: expect.stringMatching(/^whk_[0-9a-z]{26}$/),
      url: RECEIVER,
      events: ['geofence.*', 'alarm.*'],
      device_ids: null,
      description: 'Dispatch',
      enabled: true,
      status: 'enabled',
      disabled_reason: null,
      disabled_detail: null,
      disabled_at: null,
      secret_rotated_at: null,
      previous_secret_valid_until: null,
      created_at: '2026-11-22T12:00:00.000Z',
      updated_at: '2026-11-22T12:00:00.000Z',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    const secret = body.secret as string;

    const one = await c.get(res.headers.location as string);
    expect(one.statusCode).toBe(200);
    const { secret: _shownOnce, ...withoutSecret } = body;
    expect(one.json()).toEqual(withoutSecret);
    const list = await c.get('/v1/webhooks');
    expect(list.json()).toEqual({ data: [withoutSecret], pagination: { next_cursor: null, has_more: false } });
    for (const r of [one, list]) expect(r.body).not.toContain(secret.slice(6));

    const log = await logText();
    expect(log).toContain(body.id);
    expect(log).not.toContain(secret.slice(6));
    // Sealed with the server key: only it opens what the log holds.
    const created = (await h.store.readStream(streams.webhook(body.id)))[0]!;
    if (created.type !== 'WebhookEndpointCreated') throw new Error(`unexpected ${created.type}`);
    expect(h.secretBox.open(created.data.secret_ciphertext)).toBe(secret);
  });

  it('takes exact kinds, prefix.* and *; an unknown kind is a 400 pointing at it', async () => {
    await start();
    const c = await customer();
    for (const events of [['*'], ['alarm.dsm.*', 'event.*'], ['position.updated', 'device.online', 'device.offline']]) {
      const res = await c.create({ url: RECEIVER, events });
      expect(res.statusCode, JSON.stringify(events)).toBe(201);
      expect(res.json().events).toEqual(events);
    }
    expect(pointers(await c.create({ url: RECEIVER, events: ['geofence.enter', 'geofence.entered'] }))).toEqual(['/body/events/1']);
    expect(pointers(await c.create({ url: RECEIVER, events: ['alarms.*'] }))).toEqual(['/body/events/0']);
    expect(pointers(await c.create({ url: RECEIVER, events: [] }))).toEqual(['/body/events']);
    expect(pointers(await c.create({ events: ['*'] }))).toEqual(['/body/url']);
    expect(pointers(await c.create({ url: RECEIVER, events: ['*'], secret: 'whsec_mine' }))).toEqual(['/body/secret']);
    expect((await c.get('/v1/webhooks')).json().data).toHaveLength(3);
  });

  it('refuses private, loopback and metadata URLs without the development setting, saying why', async () => {
    await start({ settings: { allowPrivateWebhookUrls: false } });
    const c = await customer();
    for (const url of ['https://127.0.0.1/hook', 'https://169.254.169.254/latest/meta-data', 'https://10.0.0.5/hook', 'https://localhost:8443/hook', 'http://hooks.example.com/x']) {
      const res = await c.create({ url, events: ['*'] });
      expect(pointers(res), url).toEqual(['/body/url']);
      expect(res.json().errors[0].message, url).toMatch(/url (must|host)/);
    }
    expect((await c.create({ url: RECEIVER, events: ['*'] })).statusCode).toBe(201);
  });

  it('accepts a local http receiver with the development setting (the tests default)', async () => {
    await start();
    const c = await customer();
    const res = await c.create({ url: 'http://127.0.0.1:4567/hook', events: ['*'] });
    expect(res.statusCode).toBe(201);
    expect((await c.patch(res.json().id, { url: 'http://localhost:4568/other' })).json().url).toBe('http://localhost:4568/other');
  });

  it("takes device_ids of the customer's own devices only", async () => {
    await start();
    const a = await customer('A');
    const b = await customer('B');
    const { device_id: mine } = await registerDevice(h.store, h.clock, { customer_id: a.customerId, imei: imeiFrom('35693803564380'), model: 'FMB920' });
    const { device_id: theirs } = await registerDevice(h.store, h.clock, { customer_id: b.customerId, imei: imeiFrom('86123456789012'), model: 'FMB920' });
    const res = await a.create({ url: RECEIVER, events: ['*'], device_ids: [mine] });
    expect(res.statusCode).toBe(201);
    expect(res.json().device_ids).toEqual([mine]);
    expect(pointers(await a.create({ url: RECEIVER, events: ['*'], device_ids: [mine, theirs] }))).toEqual(['/body/device_ids/1']);
  });
});

describe('PATCH, DELETE and rotate-secret', () => {
  it('merge-patches: only given fields change, null clears, nothing to change writes nothing', async () => {
    await start();
    const c = await customer();
    const { id } = (await c.create({ url: RECEIVER, events: ['*'], description: 'Dispatch' })).json();
    h.clock.advance(60_000);
    const patched = await c.patch(id, { events: ['event.sos'], description: null, enabled: false });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      url: RECEIVER,
      events: ['event.sos'],
      description: null,
      enabled: false,
      status: 'disabled',
      disabled_reason: null,
      disabled_at: '2026-11-22T12:01:00.000Z',
      updated_at: '2026-11-22T12:01:00.000Z',
    });
    expect(patched.json()).not.toHaveProperty('secret');
    const before = (await h.store.readStream(streams.webhook(id))).length;
    expect((await c.patch(id, { enabled: false, events: ['event.sos'] })).json()).toEqual(patched.json());
    expect(await h.store.readStream(streams.webhook(id))).toHaveLength(before);
    expect(pointers(await c.patch(id, { events: ['event.sos', 'sos'] }))).toEqual(['/body/events/1']);
    expect(pointers(await c.patch(id, { secret: 'x' }))).toEqual(['/body/secret']);
  });

  it('shows an endpoint the platform disabled, and PATCH enabled true resumes it', async () => {
    await start();
    const c = await customer();
    const { id } = (await c.create({ url: RECEIVER, events: ['*'] })).json();
    const { position } = await h.store.appendToStream(streams.webhook(id), [
      {
        id: randomUuid(),
        type: 'WebhookEndpointDisabled',
        data: { webhook_id: id, customer_id: c.customerId, reason: 'gone', detail: 'The receiver answered 410 Gone', disabled_at: h.clock.now() },
      },
    ]);
    await h.runner.waitFor(position);
    expect((await c.get(`/v1/webhooks/${id}`)).json()).toMatchObject({
      enabled: false,
      status: 'disabled_by_platform',
      disabled_reason: 'gone',
      disabled_detail: 'The receiver answered 410 Gone',
      disabled_at: '2026-11-22T12:00:00.000Z',
    });
    expect((await c.patch(id, { enabled: true })).json()).toMatchObject({ enabled: true, status: 'enabled', disabled_reason: null, disabled_at: null });
  });

  it('deletes with 204, then the endpoint is 404 everywhere', async () => {
    await start();
    const c = await customer();
    const { id } = (await c.create({ url: RECEIVER, events: ['*'] })).json();
    const del = await c.del(id);
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    for (const res of [await c.get(`/v1/webhooks/${id}`), await c.del(id), await c.patch(id, { enabled: false }), await c.rotate(id, {})]) {
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    expect((await c.get('/v1/webhooks')).json().data).toEqual([]);
  });

  it('rotates the secret: a new whsec_ once, no-store, the previous one valid for the grace period (24 h by default)', async () => {
    await start();
    const c = await customer();
    const created = (await c.create({ url: RECEIVER, events: ['*'] })).json();
    h.clock.advance(1000);
    const rotated = await c.rotate(created.id, { grace_period_s: 3600 });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    expect(rotated.json()).toEqual({ secret: expect.stringMatching(/^whsec_/), previous_secret_valid_until: '2026-11-22T13:00:01.000Z' });
    expect(rotated.json().secret).not.toBe(created.secret);
    expect((await c.get(`/v1/webhooks/${created.id}`)).json()).toMatchObject({
      secret_rotated_at: '2026-11-22T12:00:01.000Z',
      previous_secret_valid_until: '2026-11-22T13:00:01.000Z',
    });
    expect(await logText()).not.toContain((rotated.json().secret as string).slice(6));

    const byDefault = await c.rotate(created.id);
    expect(byDefault.statusCode).toBe(200);
    expect(byDefault.json().previous_secret_valid_until).toBe('2026-11-23T12:00:01.000Z');
    expect(pointers(await c.rotate(created.id, { grace_period_s: 8 * 86_400 }))).toEqual(['/body/grace_period_s']);
  });
});

describe('tenants and scopes', () => {
  it("answers 404 for another customer's endpoint on every route, and lists only one's own", async () => {
    await start();
    const a = await customer('A');
    const b = await customer('B');
    const { id } = (await a.create({ url: RECEIVER, events: ['*'] })).json();
    for (const res of [await b.get(`/v1/webhooks/${id}`), await b.patch(id, { enabled: false }), await b.del(id), await b.rotate(id, {})]) {
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    expect((await b.get('/v1/webhooks')).json().data).toEqual([]);
    expect((await a.get(`/v1/webhooks/${id}`)).json()).toMatchObject({ enabled: true });
    expect(await h.store.readStream(streams.webhook(id))).toHaveLength(1);
  });

  it('needs webhooks:write to change and webhooks:read to read', async () => {
    await start();
    const a = await customer();
    const { id } = (await a.create({ url: RECEIVER, events: ['*'] })).json();
    const reader = client(await h.newKey(a.customerId, ['webhooks:read']));
    expect((await reader.get('/v1/webhooks')).statusCode).toBe(200);
    expect((await reader.get(`/v1/webhooks/${id}`)).statusCode).toBe(200);
    for (const res of [await reader.create({ url: RECEIVER, events: ['*'] }), await reader.patch(id, { enabled: false }), await reader.del(id), await reader.rotate(id, {})]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('insufficient_scope');
    }
    const stranger = client(await h.newKey(a.customerId, ['devices:read']));
    expect((await stranger.get('/v1/webhooks')).statusCode).toBe(403);
    const writer = client(await h.newKey(a.customerId, ['webhooks:write']));
    expect((await writer.get(`/v1/webhooks/${id}`)).statusCode).toBe(200);
    expect((await writer.create({ url: RECEIVER, events: ['*'] })).statusCode).toBe(201);
  });
});

describe('GET /v1/webhooks', () => {
  it('paginates in id order with opaque cursors', async () => {
    await start();
    const c = await customer();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await c.create({ url: RECEIVER, events: ['*'], description: `hook ${i}` })).json().id);
      h.clock.advance(1);
    }
    const seen: string[] = [];
    let url = '/v1/webhooks?limit=2';
    for (;;) {
      const page = (await c.get(url)).json();
      seen.push(...page.data.map((w: { id: string }) => w.id));
      if (!page.pagination.has_more) break;
      url = `/v1/webhooks?limit=2&cursor=${page.pagination.next_cursor}`;
    }
    expect(seen).toEqual(ids);
    expect((await c.get('/v1/webhooks?cursor=bm9wZQ')).statusCode).toBe(400);
  });
});
