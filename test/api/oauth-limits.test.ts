/**
 * The token endpoint's limits over a real HTTP server (each case from loopback
 * addresses of its own) on the harness's manual clock: failed client secrets
 * per client id and per address, and issuance per client, which bounds the
 * OAuthTokenIssued events a client appends. Tokens still die with their client.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_ISSUE_LIMITS, TOKEN_SECRET_LIMITS } from '../../api/oauth-token.js';
import { streams } from '../../core/streams.js';
import { bearer, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { requestFrom, type HttpAnswer } from '../support/http-from.js';
import { ResponseValidator, loadOpenApi } from '../support/openapi.js';

let h: ApiHarness;
let base: string;
let doc: ResponseValidator;

beforeAll(async () => {
  h = await startApiHarness();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  doc = new ResponseValidator(await loadOpenApi(h.app));
});
afterAll(async () => {
  await h.close();
});

async function customerWithClient() {
  const customer = await h.newCustomer();
  const res = await requestFrom(base, 'POST', '/v1/oauth/clients', {
    headers: bearer(customer.apiKey),
    body: { name: 'Integrator Ltd', scopes: ['devices:read'] },
  });
  expect(res.status, res.text).toBe(201);
  return { ...customer, clientId: res.json.client_id as string, clientSecret: res.json.client_secret as string };
}

const tokenRequest = (clientId: string, clientSecret: string, from: string) =>
  requestFrom(base, 'POST', '/v1/oauth/token', { body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }, from });

const count = (answers: HttpAnswer[], status: number) => answers.filter((a) => a.status === status).length;

function expectLimited(a: HttpAnswer): void {
  expect(a.status).toBe(429);
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  expect(a.headers['cache-control']).toBe('no-store');
  expect(a.json).toEqual({ error: 'rate_limited', error_description: expect.any(String) });
  expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  doc.check('POST', '/v1/oauth/token', a.status, a.json, String(a.headers['content-type']));
}

async function tokenEvents(customerId: string): Promise<number> {
  return (await h.store.readStream(streams.tenant(customerId))).filter((e) => e.type === 'OAuthTokenIssued').length;
}

describe('POST /v1/oauth/token limits', () => {
  it('200 wrong secrets for one client at once: the first 10 are 401, the rest 429; the right secret waits for the window', async () => {
    const c = await customerWithClient();
    // Twenty addresses, ten each: the client id's count is the one that limits.
    const wrong = await Promise.all(Array.from({ length: 200 }, (_, i) => tokenRequest(c.clientId, `fleet_cs_wrong${i}`, `127.0.3.${i % 20}`)));
    expect(count(wrong, 401)).toBe(TOKEN_SECRET_LIMITS.maxFailures);
    expect(count(wrong, 429)).toBe(200 - TOKEN_SECRET_LIMITS.maxFailures);
    for (const a of wrong.filter((w) => w.status === 429)) expectLimited(a);

    const refused = await tokenRequest(c.clientId, c.clientSecret, '127.0.3.100');
    expectLimited(refused);
    expect(Number(refused.headers['retry-after'])).toBe(TOKEN_SECRET_LIMITS.windowMs / 1000);
    h.clock.advance(TOKEN_SECRET_LIMITS.windowMs - 1000);
    expectLimited(await tokenRequest(c.clientId, c.clientSecret, '127.0.3.100'));
    h.clock.advance(1000);
    const issued = await tokenRequest(c.clientId, c.clientSecret, '127.0.3.100');
    expect(issued.status, issued.text).toBe(200);
  });

  it('wrong secrets from one address, over any client ids, block that address only', async () => {
    const c = await customerWithClient();
    const sprayed = await Promise.all(Array.from({ length: 200 }, (_, i) => tokenRequest(`cli_guess${i}`, 'fleet_cs_wrong', '127.0.4.1')));
    expect(count(sprayed, 401)).toBeLessThanOrEqual(TOKEN_SECRET_LIMITS.maxFailures);
    expect(count(sprayed, 401) + count(sprayed, 429)).toBe(200);
    for (const a of sprayed.filter((s) => s.status === 429)) expectLimited(a);
    expectLimited(await tokenRequest(c.clientId, c.clientSecret, '127.0.4.1'));
    expect((await tokenRequest(c.clientId, c.clientSecret, '127.0.4.2')).status).toBe(200);
  });

  it('100 valid requests at once append at most the burst of OAuthTokenIssued events; the rest are 429; the tokens work until the client is deleted', async () => {
    const c = await customerWithClient();
    const { capacity, perMinute } = TOKEN_ISSUE_LIMITS;
    const first = await Promise.all(Array.from({ length: 100 }, () => tokenRequest(c.clientId, c.clientSecret, '127.0.5.1')));
    expect(count(first, 200)).toBe(capacity);
    expect(count(first, 429)).toBe(100 - capacity);
    for (const a of first.filter((f) => f.status === 429)) expectLimited(a);
    expect(await tokenEvents(c.customerId)).toBe(capacity);

    // A minute later: the bucket refilled (up to its burst), no more.
    h.clock.advance(60_000);
    const second = await Promise.all(Array.from({ length: 100 }, () => tokenRequest(c.clientId, c.clientSecret, '127.0.5.2')));
    const events = await tokenEvents(c.customerId);
    expect(events).toBe(count(first, 200) + count(second, 200));
    expect(events).toBeLessThanOrEqual(capacity + perMinute);

    const tokens = [...first, ...second].filter((a) => a.status === 200).map((a) => a.json.access_token as string);
    expect(new Set(tokens).size).toBe(events);
    for (const token of [tokens[0]!, tokens.at(-1)!]) {
      expect((await requestFrom(base, 'GET', '/v1/devices', { headers: bearer(token) })).status).toBe(200);
    }
    const deleted = await requestFrom(base, 'DELETE', `/v1/oauth/clients/${c.clientId}`, { headers: bearer(c.apiKey) });
    expect(deleted.status).toBe(204);
    for (const token of [tokens[0]!, tokens.at(-1)!]) {
      const after = await requestFrom(base, 'GET', '/v1/devices', { headers: bearer(token) });
      expect([after.status, after.json.detail]).toEqual([401, expect.stringContaining('revoked')]);
    }
    h.clock.advance(60_000);
    const noToken = await tokenRequest(c.clientId, c.clientSecret, '127.0.5.3');
    expect([noToken.status, noToken.json.error]).toEqual([401, 'invalid_client']);
    expect(await tokenEvents(c.customerId)).toBe(events);
  });
});
