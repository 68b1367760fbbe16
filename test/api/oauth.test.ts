import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../core/credentials.js';
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

/** A customer with an OAuth client holding `scopes`. */
async function customerWithClient(scopes: string[] = ['devices:write', 'positions:read']) {
  const customer = await h.newCustomer();
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/oauth/clients',
    headers: auth(customer.apiKey),
    payload: { name: 'Integrator Ltd', scopes },
  });
  expect(res.statusCode).toBe(201);
  const client = res.json() as { client_id: string; client_secret: string };
  return { ...customer, clientId: client.client_id, clientSecret: client.client_secret };
}

function tokenJson(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return h.app.inject({ method: 'POST', url: '/v1/oauth/token', payload: body, headers });
}

function tokenForm(body: Record<string, string>, headers: Record<string, string> = {}) {
  return h.app.inject({
    method: 'POST',
    url: '/v1/oauth/token',
    payload: new URLSearchParams(body).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
}

describe('OAuth clients', () => {
  it('creates a client (secret once), lists it without the secret, deletes it (then 404)', async () => {
    const { apiKey } = await h.newCustomer();
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/oauth/clients',
      headers: auth(apiKey),
      payload: { name: 'Integrator Ltd', scopes: ['positions:read'] },
    });
    expect(created.statusCode).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    expectDocumented(doc, 'POST', '/v1/oauth/clients', created);
    const client = created.json();
    expect(client).toMatchObject({ name: 'Integrator Ltd', scopes: ['positions:read'], created_at: '2026-11-22T12:00:00.000Z' });
    expect(client.client_id).toMatch(/^cli_[0-9a-z]{26}$/);
    expect(client.client_secret).toMatch(/^fleet_cs_/);

    const list = await h.app.inject({ method: 'GET', url: '/v1/oauth/clients', headers: auth(apiKey) });
    expectDocumented(doc, 'GET', '/v1/oauth/clients', list);
    expect(list.json().data).toEqual([
      { client_id: client.client_id, name: 'Integrator Ltd', scopes: ['positions:read'], created_at: client.created_at },
    ]);

    // Pages by client id (ids sort by creation time); a cursor with a forged id is refused.
    h.clock.advance(1000);
    const second = await h.app.inject({
      method: 'POST', url: '/v1/oauth/clients', headers: auth(apiKey), payload: { name: 'Other Ltd', scopes: ['positions:read'] },
    });
    const firstPage = await h.app.inject({ method: 'GET', url: '/v1/oauth/clients?limit=1', headers: auth(apiKey) });
    const cursor = firstPage.json().pagination.next_cursor as string;
    const secondPage = await h.app.inject({ method: 'GET', url: `/v1/oauth/clients?limit=1&cursor=${cursor}`, headers: auth(apiKey) });
    expect(secondPage.json().data.map((c: { client_id: string }) => c.client_id)).toEqual([second.json().client_id]);
    const hash = Buffer.from(cursor, 'base64url').toString('utf8').split('~')[0];
    const forged = Buffer.from(`${hash}~zzz`).toString('base64url');
    const refused = await h.app.inject({ method: 'GET', url: `/v1/oauth/clients?limit=1&cursor=${forged}`, headers: auth(apiKey) });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().code).toBe('invalid_cursor');
    await h.app.inject({ method: 'DELETE', url: `/v1/oauth/clients/${second.json().client_id}`, headers: auth(apiKey) });

    const del = await h.app.inject({ method: 'DELETE', url: `/v1/oauth/clients/${client.client_id}`, headers: auth(apiKey) });
    expect(del.statusCode).toBe(204);
    const again = await h.app.inject({ method: 'DELETE', url: `/v1/oauth/clients/${client.client_id}`, headers: auth(apiKey) });
    expect(again.statusCode).toBe(404);
    expect((await h.app.inject({ method: 'GET', url: '/v1/oauth/clients', headers: auth(apiKey) })).json().data).toEqual([]);
  });

  it('needs api_keys:manage, and cannot give a client scopes the creator lacks', async () => {
    const { customerId } = await h.newCustomer();
    const reader = await h.newKey(customerId, ['positions:read']);
    const denied = await h.app.inject({
      method: 'POST', url: '/v1/oauth/clients', headers: auth(reader), payload: { name: 'x', scopes: ['positions:read'] },
    });
    expect(denied.statusCode).toBe(403);
    const manager = await h.newKey(customerId, ['api_keys:manage', 'positions:read']);
    const escalate = await h.app.inject({
      method: 'POST', url: '/v1/oauth/clients', headers: auth(manager), payload: { name: 'x', scopes: ['devices:write'] },
    });
    expect(escalate.statusCode).toBe(403);
    expect(escalate.json().detail).toContain('devices:write');
  });
});

describe('POST /v1/oauth/token', () => {
  it('issues a bearer token from a JSON body; the token works on the API and only its hash is stored', async () => {
    const c = await customerWithClient();
    const res = await tokenJson({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.pragma).toBe('no-cache');
    expectDocumented(doc, 'POST', '/v1/oauth/token', res);
    const token = res.json();
    expect(token).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'devices:write positions:read' });
    expect(token.access_token).toMatch(/^fleet_at_/);

    const devices = await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(token.access_token) });
    expect(devices.statusCode).toBe(200);
    expect(devices.headers['ratelimit-policy']).toBeDefined();

    const stored = JSON.stringify((await h.store.readStream(streams.tenant(c.customerId))).map((e) => e.data));
    expect(stored).not.toContain(token.access_token);
    expect(stored).not.toContain(c.clientSecret);
    expect(stored).toContain(sha256Hex(token.access_token));
  });

  it('accepts a form body, and HTTP Basic client authentication', async () => {
    const c = await customerWithClient();
    const form = await tokenForm({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret });
    expect(form.statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(form.json().access_token) })).statusCode).toBe(200);

    const basic = Buffer.from(`${c.clientId}:${c.clientSecret}`).toString('base64');
    const viaBasic = await tokenForm({ grant_type: 'client_credentials' }, { authorization: `Basic ${basic}` });
    expect(viaBasic.statusCode).toBe(200);
    const both = await tokenForm(
      { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret },
      { authorization: `Basic ${basic}` },
    );
    expect(both.statusCode).toBe(400);
    expect(both.json().error).toBe('invalid_request');
  });

  it('401 invalid_client with WWW-Authenticate for a wrong secret, an unknown client, or none', async () => {
    const c = await customerWithClient();
    for (const body of [
      { grant_type: 'client_credentials', client_id: c.clientId, client_secret: 'fleet_cs_wrong' },
      { grant_type: 'client_credentials', client_id: 'cli_unknown', client_secret: c.clientSecret },
      { grant_type: 'client_credentials' },
    ]) {
      const res = await tokenJson(body);
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic /);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
      expectDocumented(doc, 'POST', '/v1/oauth/token', res);
    }
  });

  it('answers malformed requests and other grants in the RFC 6749 shape', async () => {
    const c = await customerWithClient();
    const cases: Array<[() => ReturnType<typeof tokenJson>, string]> = [
      [() => tokenJson({ grant_type: 'password', client_id: c.clientId, client_secret: c.clientSecret }), 'unsupported_grant_type'],
      [() => tokenJson({ client_id: c.clientId, client_secret: c.clientSecret }), 'invalid_request'],
      [() => tokenJson({ grant_type: ['client_credentials'], client_id: c.clientId }), 'invalid_request'],
      [
        () => h.app.inject({ method: 'POST', url: '/v1/oauth/token', payload: '{"grant_type":', headers: { 'content-type': 'application/json' } }),
        'invalid_request',
      ],
      [
        () => h.app.inject({ method: 'POST', url: '/v1/oauth/token', payload: 'grant_type=client_credentials', headers: { 'content-type': 'text/plain' } }),
        'invalid_request',
      ],
    ];
    for (const [send, error] of cases) {
      const res = await send();
      expect(res.statusCode, error).toBe(400);
      expect(res.json()).toEqual({ error, error_description: expect.any(String) });
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });

  it('HTTP Basic with malformed percent-encoding is 401 invalid_client, not a server error', async () => {
    const c = await customerWithClient();
    for (const pair of ['%6z:secret', `${c.clientId}:%E0%A4%A`, '%:%']) {
      const res = await tokenForm({ grant_type: 'client_credentials' }, { authorization: `Basic ${Buffer.from(pair).toString('base64')}` });
      expect(res.statusCode, pair).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic /);
      expect(res.json()).toEqual({ error: 'invalid_client', error_description: expect.stringContaining('percent-encoding') });
      expectDocumented(doc, 'POST', '/v1/oauth/token', res);
    }
    // Properly escaped parts still work.
    const escaped = Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret)}`).toString('base64');
    expect((await tokenForm({ grant_type: 'client_credentials' }, { authorization: `Basic ${escaped}` })).statusCode).toBe(200);
  });

  it('a body too large is 413 in the RFC 6749 shape, form or JSON; a __proto__ key is an explained invalid_request', async () => {
    const c = await customerWithClient();
    const padding = 'x'.repeat(9 * 1024);
    for (const res of [
      await tokenForm({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret, padding }),
      await tokenJson({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret, padding }),
    ]) {
      expect(res.statusCode).toBe(413);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.json()).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('larger than') });
      expectDocumented(doc, 'POST', '/v1/oauth/token', res);
    }
    const poisoned = await h.app.inject({
      method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'application/json' },
      payload: `{"grant_type":"client_credentials","client_id":"${c.clientId}","client_secret":"${c.clientSecret}","__proto__":{}}`,
    });
    expect(poisoned.statusCode).toBe(400);
    expect(poisoned.json()).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/__proto__.*refused/) });
  });

  it('grants a requested subset of the client\'s scopes (write implies read) and refuses more', async () => {
    const c = await customerWithClient(['devices:write', 'positions:read']);
    const narrow = await tokenForm({
      grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret, scope: 'devices:read',
    });
    expect(narrow.statusCode).toBe(200);
    expect(narrow.json().scope).toBe('devices:read');
    const token = narrow.json().access_token;
    expect((await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(token) })).statusCode).toBe(200);
    const write = await h.app.inject({
      method: 'POST', url: '/v1/devices', headers: auth(token), payload: { imei: '356938035643809', model: 'FMB920' },
    });
    expect(write.statusCode).toBe(403);
    expect(write.json().detail).toContain('devices:write');
    expect((await h.app.inject({ method: 'GET', url: '/v1/positions/latest', headers: auth(token) })).statusCode).toBe(403);

    for (const scope of ['devices:read webhooks:write', 'everything']) {
      const res = await tokenForm({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret, scope });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_scope');
    }
  });

  it('tokens expire after an hour (401 invalid_token); a new one can be fetched', async () => {
    const c = await customerWithClient();
    const token = (await tokenJson({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret })).json()
      .access_token;
    h.clock.advance(3599_000);
    expect((await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(token) })).statusCode).toBe(200);
    h.clock.advance(1000);
    const expired = await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(token) });
    expect(expired.statusCode).toBe(401);
    expect(expired.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
    expect(expired.json().detail).toContain('expired');
    const fresh = await tokenJson({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret });
    expect((await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(fresh.json().access_token) })).statusCode).toBe(200);
  });

  it('deleting a client revokes its tokens and its credentials', async () => {
    const c = await customerWithClient();
    const token = (await tokenJson({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret })).json()
      .access_token;
    expect((await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(token) })).statusCode).toBe(200);
    const del = await h.app.inject({ method: 'DELETE', url: `/v1/oauth/clients/${c.clientId}`, headers: auth(c.apiKey) });
    expect(del.statusCode).toBe(204);
    const refused = await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(token) });
    expect(refused.statusCode).toBe(401);
    expect(refused.json().detail).toContain('revoked');
    const noToken = await tokenJson({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret });
    expect(noToken.statusCode).toBe(401);
    expect(noToken.json().error).toBe('invalid_client');
  });

  it('a token only sees its own tenant', async () => {
    const c = await customerWithClient();
    const other = await h.newCustomer('Other');
    const device = await h.app.inject({
      method: 'POST', url: '/v1/devices', headers: auth(other.apiKey), payload: { imei: '356938035643809', model: 'FMB920' },
    });
    const token = (await tokenJson({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret })).json()
      .access_token;
    const res = await h.app.inject({ method: 'GET', url: `/v1/devices/${device.json().id}`, headers: auth(token) });
    expect(res.statusCode).toBe(404);
  });
});
