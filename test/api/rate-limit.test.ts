import { afterEach, describe, expect, it } from 'vitest';
import { setCustomerRateLimit } from '../../core/commands/customers.js';
import type { HarnessOptions } from '../support/api-harness.js';
import { bearer, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { ResponseValidator, expectDocumented, loadOpenApi } from '../support/openapi.js';

let h: ApiHarness;
afterEach(async () => {
  await h.close();
});

async function start(options: HarnessOptions = {}) {
  h = await startApiHarness(options);
}

const auth = bearer;
const list = (key: string) => h.app.inject({ method: 'GET', url: '/v1/devices?limit=1', headers: auth(key) });

/** Sends `n` requests and returns the status codes. */
async function burst(key: string, n: number): Promise<number[]> {
  const codes: number[] = [];
  for (let i = 0; i < n; i++) codes.push((await list(key)).statusCode);
  return codes;
}

describe('rate limit headers', () => {
  it('every authenticated response carries the IETF draft fields and X-RateLimit-*', async () => {
    await start();
    const { apiKey } = await h.newCustomer('Pro fleet', 'pro');
    const res = await list(apiKey);
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit-policy']).toBe('"pro";q=1200;w=120');
    expect(res.headers['ratelimit']).toBe('"pro";r=1199;t=1');
    expect(res.headers['x-ratelimit-limit']).toBe('1200');
    expect(res.headers['x-ratelimit-remaining']).toBe('1199');
    expect(res.headers['x-ratelimit-reset']).toBe(String(Date.UTC(2026, 10, 22, 12, 0, 0) / 1000 + 1));

    // Errors of an authenticated request carry them too (and count).
    const notFound = await h.app.inject({ method: 'GET', url: '/v1/devices/dev_nope', headers: auth(apiKey) });
    expect(notFound.statusCode).toBe(404);
    expect(notFound.headers['ratelimit']).toBe('"pro";r=1198;t=1');
  });

  it('a request refused for its scope still counts; unauthenticated ones carry no headers', async () => {
    await start();
    const { customerId } = await h.newCustomer('Free fleet', 'free');
    const reader = await h.newKey(customerId, ['positions:read']);
    const forbidden = await list(reader);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.headers['x-ratelimit-remaining']).toBe('119');
    const anonymous = await h.app.inject({ method: 'GET', url: '/v1/devices' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['ratelimit']).toBeUndefined();
  });

  it('HEAD of a scoped route is authenticated, scope-checked and counted once, like its GET', async () => {
    await start();
    const { customerId, apiKey } = await h.newCustomer('Free fleet', 'free');
    const head = (headers: Record<string, string>) => h.app.inject({ method: 'HEAD', url: '/v1/devices', headers });
    expect((await head({})).statusCode).toBe(401);
    const reader = await h.newKey(customerId, ['positions:read']);
    expect((await head(auth(reader))).statusCode).toBe(403);
    const first = await head(auth(apiKey));
    const second = await head(auth(apiKey));
    expect(first.statusCode).toBe(200);
    // The 403 above took a token too: 120 - 1 - 1, then one more.
    expect(first.headers['x-ratelimit-remaining']).toBe('118');
    expect(second.headers['x-ratelimit-remaining']).toBe('117');
  });

  it('public routes run no access control', async () => {
    await start();
    const res = await h.app.inject({ method: 'GET', url: '/healthz', headers: { authorization: 'Bearer not-a-credential' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit']).toBeUndefined();
  });
});

describe('token bucket', () => {
  it('free plan: a burst of 120, then 429 rate_limited with Retry-After, as documented', async () => {
    await start();
    const { apiKey } = await h.newCustomer('Free fleet', 'free');
    const codes = await burst(apiKey, 120);
    expect(codes.every((c) => c === 200)).toBe(true);
    const limited = await list(apiKey);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(limited.headers['ratelimit']).toBe('"free";r=0;t=120');
    expect(limited.json()).toMatchObject({ status: 429, code: 'rate_limited' });
    const doc = new ResponseValidator(await loadOpenApi(h.app));
    expectDocumented(doc, 'GET', '/v1/devices', limited);
  });

  it('refills at the per-minute rate spread evenly, never above the burst', async () => {
    await start();
    const { apiKey } = await h.newCustomer('Free fleet', 'free');
    await burst(apiKey, 120);
    expect((await list(apiKey)).statusCode).toBe(429);
    // 60 a minute: one token a second.
    h.clock.advance(999);
    expect((await list(apiKey)).statusCode).toBe(429);
    h.clock.advance(1);
    expect((await list(apiKey)).statusCode).toBe(200);
    expect((await list(apiKey)).statusCode).toBe(429);
    // Half a minute: 30 more.
    h.clock.advance(30_000);
    const codes = await burst(apiKey, 31);
    expect(codes.filter((c) => c === 200)).toHaveLength(30);
    expect(codes[30]).toBe(429);
    // An idle hour refills to the burst, not beyond it.
    h.clock.advance(3_600_000);
    const refilled = await burst(apiKey, 121);
    expect(refilled.filter((c) => c === 200)).toHaveLength(120);
  });

  it('pro plan refills ten a second', async () => {
    await start({ settings: { rateLimits: { plans: { pro: { perMinute: 600, burst: 5 } } } } });
    const { apiKey } = await h.newCustomer('Pro fleet', 'pro');
    expect(await burst(apiKey, 6)).toEqual([200, 200, 200, 200, 200, 429]);
    h.clock.advance(100);
    expect(await burst(apiKey, 2)).toEqual([200, 429]);
  });

  it('buckets are per tenant: one exhausted tenant does not slow another', async () => {
    await start();
    const a = await h.newCustomer('A', 'free');
    const b = await h.newCustomer('B', 'free');
    const aSecond = await h.newKey(a.customerId, ['devices:read']);
    await burst(a.apiKey, 120);
    expect((await list(a.apiKey)).statusCode).toBe(429);
    // Another key of the same tenant shares its bucket.
    expect((await list(aSecond)).statusCode).toBe(429);
    const other = await list(b.apiKey);
    expect(other.statusCode).toBe(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('119');
  });

  it('enterprise: a generous default until the agreement is set for the customer, then its limit; cleared, the default again', async () => {
    await start();
    const big = await h.newCustomer('Big', 'enterprise');
    const other = await h.newCustomer('Other', 'enterprise');
    const agree = async (limit: { per_minute: number; burst: number } | null) => {
      await h.runner.waitFor(await setCustomerRateLimit(h.store, h.clock, big.customerId, limit));
    };
    // An OAuth client of the customer, for later.
    const client = await h.app.inject({ method: 'POST', url: '/v1/oauth/clients', headers: auth(big.apiKey), payload: { name: 'Integrator', scopes: ['devices:read'] } });
    expect(client.statusCode, client.body).toBe(201);
    const { client_id, client_secret } = client.json() as { client_id: string; client_secret: string };
    const token = await h.app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id, client_secret } });
    expect(token.statusCode, token.body).toBe(200);
    expect((await list(big.apiKey)).headers['ratelimit-policy']).toBe('"enterprise";q=120000;w=120');
    // Entered for a tenant that already exists and has already been served: the next request follows it.
    await agree({ per_minute: 60, burst: 2 });
    const limited = await list(big.apiKey);
    expect(limited.headers['ratelimit-policy']).toBe('"enterprise";q=2;w=2');
    expect([limited.statusCode, ...(await burst(big.apiKey, 2))]).toEqual([200, 200, 429]);
    expect((await list(other.apiKey)).headers['ratelimit-policy']).toBe('"enterprise";q=120000;w=120');
    // The OAuth token goes by the same agreement.
    await agree({ per_minute: 600, burst: 3 });
    expect((await list(token.json().access_token as string)).headers['ratelimit-policy']).toBe('"enterprise";q=3;w=1');
    await agree(null);
    expect((await list(big.apiKey)).headers['ratelimit-policy']).toBe('"enterprise";q=120000;w=120');
  });
});
