import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { streams } from '../../core/streams.js';
import { bearer, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { ResponseValidator, expectDocumented, loadOpenApi } from '../support/openapi.js';

let h: ApiHarness;
let doc: ResponseValidator;
beforeEach(async () => {
  h = await startApiHarness();
  doc = new ResponseValidator(await loadOpenApi(h.app));
});
afterEach(async () => {
  await h.close();
});

const auth = bearer;

async function createKey(adminKey: string, body: unknown) {
  return h.app.inject({ method: 'POST', url: '/v1/api-keys', headers: auth(adminKey), payload: body as object });
}

describe('POST /v1/api-keys', () => {
  it('creates a key whose secret is shown once and which works for its scopes only', async () => {
    const { apiKey } = await h.newCustomer();
    const res = await createKey(apiKey, { name: 'Dispatch board', scopes: ['positions:read', 'devices:read'] });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expectDocumented(doc, 'POST', '/v1/api-keys', res);
    const created = res.json();
    expect(created).toMatchObject({
      name: 'Dispatch board',
      scopes: ['positions:read', 'devices:read'],
      created_at: '2026-11-22T12:00:00.000Z',
      last_used_at: null,
      revoked_at: null,
    });
    expect(created.id).toMatch(/^key_[0-9a-z]{26}$/);
    expect(created.secret).toMatch(/^fleet_key_/);

    const read = await h.app.inject({ method: 'GET', url: '/v1/positions/latest', headers: auth(created.secret) });
    expect(read.statusCode).toBe(200);
    const write = await h.app.inject({
      method: 'POST',
      url: '/v1/devices',
      headers: auth(created.secret),
      payload: { imei: '356938035643809', model: 'FMB920' },
    });
    expect(write.statusCode).toBe(403);
    expect(write.json().detail).toContain('devices:write');

    const list = await h.app.inject({ method: 'GET', url: '/v1/api-keys', headers: auth(apiKey) });
    expect(list.body).not.toContain(created.secret);
    expect(JSON.stringify(list.json())).not.toContain('secret');
  });

  it('validates scopes against the scope list, pointing at the bad one', async () => {
    const { apiKey } = await h.newCustomer();
    const unknown = await createKey(apiKey, { name: 'x', scopes: ['devices:read', 'everything'] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().errors).toContainEqual(expect.objectContaining({ pointer: '/body/scopes/1' }));
    expectDocumented(doc, 'POST', '/v1/api-keys', unknown);
    for (const body of [{ name: 'x', scopes: [] }, { name: '', scopes: ['devices:read'] }, { name: 'x', scopes: ['devices:read', 'devices:read'] }]) {
      const refused = await createKey(apiKey, body);
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
      expectDocumented(doc, 'POST', '/v1/api-keys', refused);
    }
  });

  it('refuses to grant a scope the creating key lacks; write lets it grant read', async () => {
    const { customerId } = await h.newCustomer();
    const manager = await h.newKey(customerId, ['api_keys:manage', 'devices:write']);
    const escalate = await createKey(manager, { name: 'x', scopes: ['devices:read', 'webhooks:write'] });
    expect(escalate.statusCode).toBe(403);
    expect(escalate.json()).toMatchObject({ code: 'insufficient_scope', errors: [{ pointer: '/body/scopes/1' }] });
    expect(escalate.json().detail).toContain('webhooks:write');
    expectDocumented(doc, 'POST', '/v1/api-keys', escalate);
    const narrower = await createKey(manager, { name: 'x', scopes: ['devices:read'] });
    expect(narrower.statusCode).toBe(201);
    expectDocumented(doc, 'POST', '/v1/api-keys', narrower);
  });

  it('needs api_keys:manage', async () => {
    const { customerId } = await h.newCustomer();
    const reader = await h.newKey(customerId, ['devices:read']);
    const res = await createKey(reader, { name: 'x', scopes: ['devices:read'] });
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toContain('api_keys:manage');
    expect(res.headers['www-authenticate']).toContain('insufficient_scope');
    expectDocumented(doc, 'POST', '/v1/api-keys', res);
  });
});

describe('GET /v1/api-keys', () => {
  it('lists the tenant\'s keys in id order, paginated, without other tenants\' keys', async () => {
    const a = await h.newCustomer('A');
    await h.newCustomer('B');
    for (const name of ['one', 'two']) {
      h.clock.advance(1000);
      expect((await createKey(a.apiKey, { name, scopes: ['devices:read'] })).statusCode).toBe(201);
    }
    const first = await h.app.inject({ method: 'GET', url: '/v1/api-keys?limit=2', headers: auth(a.apiKey) });
    expect(first.statusCode).toBe(200);
    expectDocumented(doc, 'GET', '/v1/api-keys', first);
    const body = first.json();
    expect(body.data.map((k: { name: string }) => k.name)).toEqual(['Default full-access key', 'one']);
    expect(body.pagination.has_more).toBe(true);
    const second = await h.app.inject({
      method: 'GET',
      url: `/v1/api-keys?limit=2&cursor=${body.pagination.next_cursor}`,
      headers: auth(a.apiKey),
    });
    expectDocumented(doc, 'GET', '/v1/api-keys', second);
    expect(second.json().data.map((k: { name: string }) => k.name)).toEqual(['two']);
    expect(second.json().pagination).toEqual({ next_cursor: null, has_more: false });
  });

  it('shows last_used_at without a store append per request; usage is flushed as one event per tenant', async () => {
    const { customerId, apiKey } = await h.newCustomer();
    const reader = await h.newKey(customerId, ['devices:read']);
    const tenantEvents = async () => (await h.store.readStream(streams.tenant(customerId))).length;
    const before = await tenantEvents();
    for (let i = 0; i < 10; i++) {
      h.clock.advance(1000);
      expect((await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(reader) })).statusCode).toBe(200);
    }
    expect(await tenantEvents()).toBe(before);

    const list = await h.app.inject({ method: 'GET', url: '/v1/api-keys', headers: auth(apiKey) });
    expectDocumented(doc, 'GET', '/v1/api-keys', list);
    const readerRow = list.json().data.find((k: { scopes: string[] }) => k.scopes.join() === 'devices:read');
    expect(readerRow.last_used_at).toBe('2026-11-22T12:00:10.000Z');

    await h.app.keyUsage.flush();
    const events = await h.store.readStream(streams.tenant(customerId));
    expect(events).toHaveLength(before + 1);
    const used = events[events.length - 1]!;
    expect(used.type).toBe('ApiKeysUsed');
    // Both keys used since the start (the admin key by the list call), in one event.
    expect((used.data as { keys: unknown[] }).keys).toHaveLength(2);
    await h.runner.waitFor(used.position);
    const row = h.runner.db.prepare('SELECT last_used_at FROM api_key_usage ORDER BY last_used_at DESC LIMIT 1').pluck().get();
    expect(row).toBe(Date.UTC(2026, 10, 22, 12, 0, 10));
    await h.app.keyUsage.flush();
    expect(await h.store.readStream(streams.tenant(customerId))).toHaveLength(before + 1);
  });
});

describe('DELETE /v1/api-keys/{id}', () => {
  it('revokes: 204, then the key gets 401 with WWW-Authenticate, and the list shows revoked_at', async () => {
    const { customerId, apiKey } = await h.newCustomer();
    const victim = await createKey(apiKey, { name: 'leaked', scopes: ['devices:read'] });
    const { id, secret } = victim.json();
    expect((await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(secret) })).statusCode).toBe(200);
    h.clock.advance(5000);
    const del = await h.app.inject({ method: 'DELETE', url: `/v1/api-keys/${id}`, headers: auth(apiKey) });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expectDocumented(doc, 'DELETE', '/v1/api-keys/{id}', del);
    const refused = await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(secret) });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
    expect(refused.json().code).toBe('invalid_credentials');
    const again = await h.app.inject({ method: 'DELETE', url: `/v1/api-keys/${id}`, headers: auth(apiKey) });
    expect(again.statusCode).toBe(204);
    expectDocumented(doc, 'DELETE', '/v1/api-keys/{id}', again);
    const revokedEvents = (await h.store.readStream(streams.tenant(customerId))).filter((e) => e.type === 'ApiKeyRevoked');
    expect(revokedEvents).toHaveLength(1);
    const list = await h.app.inject({ method: 'GET', url: '/v1/api-keys', headers: auth(apiKey) });
    expectDocumented(doc, 'GET', '/v1/api-keys', list);
    expect(list.json().data.find((k: { id: string }) => k.id === id).revoked_at).toBe('2026-11-22T12:00:05.000Z');
  });

  it('404 for an unknown key and for another tenant\'s key', async () => {
    const a = await h.newCustomer('A');
    const b = await h.newCustomer('B');
    const bKey = (await createKey(b.apiKey, { name: 'b', scopes: ['devices:read'] })).json();
    const unknown = await h.app.inject({ method: 'DELETE', url: '/v1/api-keys/key_nope', headers: auth(a.apiKey) });
    expect(unknown.statusCode).toBe(404);
    expectDocumented(doc, 'DELETE', '/v1/api-keys/{id}', unknown);
    const foreign = await h.app.inject({ method: 'DELETE', url: `/v1/api-keys/${bKey.id}`, headers: auth(a.apiKey) });
    expect(foreign.statusCode).toBe(404);
    expectDocumented(doc, 'DELETE', '/v1/api-keys/{id}', foreign);
    expect((await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(bKey.secret) })).statusCode).toBe(200);
  });
});
