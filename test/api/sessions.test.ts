/**
 * Panel sessions over a real HTTP server: login, the cookie's flags, CSRF on
 * state-changing requests, logout, throttled wrong logins, tenant isolation of
 * cookies, and session tokens that never appear in a response body or a log line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';
import { createCustomer } from '../../core/commands/customers.js';
import { imeiFrom } from '../../core/imei.js';
import { startApiHarness } from '../support/api-harness.js';
import { requestFrom, type HttpAnswer } from '../support/http-from.js';
import { capturingLogger, startPlatformHarness, type PlatformHarness } from '../support/platform-harness.js';
import { openSse } from '../support/sse-client.js';

const PASSWORD = 'a long enough password';
const logs = capturingLogger('debug');
let h: PlatformHarness;
/** Every answer of this file, and every session token handed out: none may contain one. */
const answers: HttpAnswer[] = [];
const tokens: string[] = [];

interface Login {
  customerId: string;
  apiKey: string;
  email: string;
}

async function newLogin(name: string, email: string): Promise<Login> {
  const c = await createCustomer(h.platform.store, systemClock, { name, plan: 'pro', first_user: { email, name: `${name} admin`, password: PASSWORD } });
  return { customerId: c.customer_id, apiKey: c.api_key, email };
}

async function call(method: string, path: string, options: Parameters<typeof requestFrom>[3] = {}): Promise<HttpAnswer> {
  const answer = await requestFrom(h.base, method, path, options);
  answers.push(answer);
  return answer;
}

const login = (email: string, password: string, from?: string) => call('POST', '/v1/sessions', { body: { email, password }, ...(from ? { from } : {}) });

/** Logs in and returns the cookie header to send and the CSRF token. */
async function session(email: string, from?: string): Promise<{ cookie: string; csrf: string; token: string }> {
  const res = await login(email, PASSWORD, from);
  expect(res.status, res.text).toBe(201);
  const token = /^fleet_session=([^;]+);/.exec(String(res.headers['set-cookie']))![1]!;
  tokens.push(token);
  return { cookie: `fleet_session=${token}`, csrf: res.json.csrf_token as string, token };
}

beforeAll(async () => {
  h = await startPlatformHarness({}, logs.log);
});
afterAll(async () => {
  await h.close();
});

describe('POST /v1/sessions', () => {
  it('logs in (any email case), sets an HttpOnly SameSite=Strict cookie for 12 h, and answers user, customer and CSRF token', async () => {
    const acme = await newLogin('Acme', 'ann@acme.example');
    const res = await login('Ann@ACME.example', PASSWORD, '127.0.0.10');
    expect(res.status, res.text).toBe(201);
    const setCookie = res.headers['set-cookie'];
    expect(setCookie).toHaveLength(1);
    expect(setCookie![0]).toMatch(/^fleet_session=fleet_ses_[\w-]{32}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    tokens.push(/^fleet_session=([^;]+)/.exec(setCookie![0]!)![1]!);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json).toEqual({
      user: { user_id: expect.stringMatching(/^usr_/), email: 'ann@acme.example', name: 'Acme admin', customer_id: acme.customerId },
      customer: { customer_id: acme.customerId, name: 'Acme', plan: 'pro' },
      csrf_token: expect.stringMatching(/^[\w-]{43}$/),
      expires_at: expect.any(String),
    });
    const lifetime = Date.parse(res.json.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(11.9 * 3_600_000);
    expect(lifetime).toBeLessThanOrEqual(12 * 3_600_000);
  });

  it('answers a wrong password and an unknown email alike: 401 invalid_login', async () => {
    await newLogin('Wrong', 'wrong@fleet.example');
    const wrong = await login('wrong@fleet.example', 'not the password', '127.0.0.11');
    const unknown = await login('nobody@fleet.example', PASSWORD, '127.0.0.11');
    const shape = (r: HttpAnswer) => ({ status: r.status, type: r.headers['content-type'], cookie: r.headers['set-cookie'], code: r.json.code, detail: r.json.detail, title: r.json.title });
    expect(shape(wrong)).toEqual({
      status: 401,
      type: 'application/problem+json; charset=utf-8',
      cookie: undefined,
      code: 'invalid_login',
      detail: 'The email or password is wrong.',
      title: 'Unauthorized',
    });
    expect(shape(unknown)).toEqual(shape(wrong));
  });

  it('refuses an email with 5 failures in 15 minutes with 429 and Retry-After, even with the right password, from any address', async () => {
    await newLogin('Guessed', 'guessed@fleet.example');
    for (let i = 0; i < 5; i++) expect((await login('guessed@fleet.example', `guess ${i}`, `127.0.0.${20 + i}`)).status).toBe(401);
    const refused = await login('GUESSED@fleet.example', PASSWORD, '127.0.0.25');
    expect(refused.status).toBe(429);
    expect(refused.json.code).toBe('too_many_login_attempts');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    expect(refused.headers['set-cookie']).toBeUndefined();
  });

  it('refuses an address with 5 failures (over any emails) while other addresses still log in', async () => {
    await newLogin('Sprayed', 'sprayed@fleet.example');
    for (let i = 0; i < 5; i++) expect((await login(`spray${i}@fleet.example`, 'whatever', '127.0.0.30')).status).toBe(401);
    const fromSprayer = await login('sprayed@fleet.example', PASSWORD, '127.0.0.30');
    expect([fromSprayer.status, fromSprayer.json.code]).toEqual([429, 'too_many_login_attempts']);
    expect(fromSprayer.headers['retry-after']).toBeDefined();
    tokens.push((await session('sprayed@fleet.example', '127.0.0.31')).token);
  });

  it('takes JSON only, so a cross-site HTML form cannot log a browser in (a JSON POST from another origin needs a CORS preflight)', async () => {
    const form = await requestFrom(h.base, 'POST', '/v1/sessions', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `email=ann%40acme.example&password=${encodeURIComponent(PASSWORD)}`,
      from: '127.0.0.12',
    });
    expect(form.status).toBe(415);
    expect(form.headers['set-cookie']).toBeUndefined();
  });

  it('sets Secure on the cookie when the public URL is https (TLS ends at a proxy)', async () => {
    const api = await startApiHarness({ settings: { publicUrl: 'https://fleet.example' } });
    try {
      await createCustomer(api.store, api.clock, { name: 'Tls', plan: 'free', first_user: { email: 'tls@fleet.example', name: 'T', password: PASSWORD } });
      const res = await api.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email: 'tls@fleet.example', password: PASSWORD } });
      expect(res.statusCode).toBe(201);
      expect(res.headers['set-cookie']).toMatch(/; HttpOnly; SameSite=Strict; Secure; Max-Age=43200$/);
    } finally {
      await api.close();
    }
  });
});

describe('the session cookie', () => {
  it("reads its own customer's devices and never another customer's; an Authorization header wins over it", async () => {
    const alpha = await newLogin('Alpha', 'ops@alpha.example');
    const beta = await newLogin('Beta', 'ops@beta.example');
    const register = async (who: Login, imei: string) => {
      const res = await call('POST', '/v1/devices', { headers: { authorization: `Bearer ${who.apiKey}` }, body: { imei: imeiFrom(imei), model: 'FMB920' } });
      expect(res.status, res.text).toBe(201);
      return res.json.id as string;
    };
    const alphaDevice = await register(alpha, '35693803564401');
    const betaDevice = await register(beta, '35693803564402');
    const { cookie, csrf } = await session('ops@alpha.example', '127.0.0.40');

    const list = await call('GET', '/v1/devices', { headers: { cookie } });
    expect(list.status).toBe(200);
    expect(list.json.data.map((d: { id: string }) => d.id)).toEqual([alphaDevice]);
    expect(list.headers['ratelimit-policy']).toBe('"pro";q=1200;w=120');
    expect((await call('GET', `/v1/devices/${betaDevice}`, { headers: { cookie } })).status).toBe(404);
    expect((await call('PATCH', `/v1/devices/${betaDevice}`, { headers: { cookie, 'x-csrf-token': csrf }, body: { name: 'mine' } })).status).toBe(404);

    const asBeta = await call('GET', '/v1/devices', { headers: { cookie, authorization: `Bearer ${beta.apiKey}` } });
    expect(asBeta.json.data.map((d: { id: string }) => d.id)).toEqual([betaDevice]);
    // A cookie that is not a live session is refused, not ignored.
    expect((await call('GET', '/v1/devices', { headers: { cookie: 'fleet_session=fleet_ses_made_up' } })).status).toBe(401);
  });

  it('needs X-CSRF-Token (of its own session) on POST, PATCH and DELETE; GET needs none', async () => {
    await newLogin('Csrf', 'ops@csrf.example');
    const { cookie, csrf } = await session('ops@csrf.example', '127.0.0.41');
    const other = await session('ops@alpha.example', '127.0.0.41');
    const body = { name: 'Yard', center: { lat: 56.95, lng: 24.1 }, radius_m: 300 };
    const without = await call('POST', '/v1/geofences', { headers: { cookie }, body });
    expect([without.status, without.json.code]).toEqual([403, 'csrf_failed']);
    const foreign = await call('POST', '/v1/geofences', { headers: { cookie, 'x-csrf-token': other.csrf }, body });
    expect([foreign.status, foreign.json.code]).toEqual([403, 'csrf_failed']);
    const created = await call('POST', '/v1/geofences', { headers: { cookie, 'x-csrf-token': csrf }, body });
    expect(created.status, created.text).toBe(201);
    expect((await call('GET', `/v1/geofences/${created.json.id}`, { headers: { cookie } })).status).toBe(200);
    expect((await call('DELETE', `/v1/geofences/${created.json.id}`, { headers: { cookie } })).json.code).toBe('csrf_failed');
    expect((await call('DELETE', `/v1/geofences/${created.json.id}`, { headers: { cookie, 'x-csrf-token': csrf } })).status).toBe(204);
  });

  it('GET /v1/sessions/current answers the session with its CSRF token; /v1/stream opens with the cookie', async () => {
    const { cookie, csrf } = await session('ops@csrf.example', '127.0.0.42');
    const current = await call('GET', '/v1/sessions/current', { headers: { cookie } });
    expect(current.status).toBe(200);
    expect(current.json).toMatchObject({ user: { email: 'ops@csrf.example' }, customer: { name: 'Csrf' }, csrf_token: csrf });
    expect(current.headers['set-cookie']).toBeUndefined();
    expect((await call('GET', '/v1/sessions/current')).status).toBe(401);

    const stream = await openSse(`${h.base}/v1/stream`, { cookie });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toContain('text/event-stream');
    } finally {
      stream.close();
    }
  });

  it('logout needs the CSRF token, ends the session and its open stream, and clears the cookie; the cookie is refused from then on', async () => {
    const { cookie, csrf } = await session('ops@csrf.example', '127.0.0.43');
    const stream = await openSse(`${h.base}/v1/stream`, { cookie });
    expect((await call('DELETE', '/v1/sessions/current', { headers: { cookie } })).json.code).toBe('csrf_failed');
    const out = await call('DELETE', '/v1/sessions/current', { headers: { cookie, 'x-csrf-token': csrf } });
    expect(out.status).toBe(204);
    expect(out.headers['set-cookie']).toEqual(['fleet_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0']);
    await stream.ended(10_000);
    for (const path of ['/v1/devices', '/v1/sessions/current']) {
      const after = await call('GET', path, { headers: { cookie } });
      expect([path, after.status, after.json.code]).toEqual([path, 401, 'invalid_credentials']);
    }
  });

  it('no session token appears in any response body or log line', () => {
    expect(tokens.length).toBeGreaterThan(5);
    expect(logs.lines.length).toBeGreaterThan(0);
    for (const token of tokens) {
      for (const a of answers) expect(a.text).not.toContain(token);
      for (const line of logs.lines) expect(line).not.toContain(token);
    }
  });
});
