import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { bearer, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { ResponseValidator, expectDocumented, loadOpenApi } from '../support/openapi.js';

const IMEI_A = imeiFrom('35693803564380'); // 356938035643809
const IMEI_B = imeiFrom('86123456789012');

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

describe('POST /v1/devices', () => {
  it('registers a device: 201, Location, and the device as GET returns it', async () => {
    const { apiKey } = await h.newCustomer();
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/devices',
      headers: auth(apiKey),
      payload: { imei: IMEI_A, model: 'FMB920', name: 'Van 12', group_id: 'north' },
    });
    expect(res.statusCode).toBe(201);
    expectDocumented(doc, 'POST', '/v1/devices', res);
    const body = res.json();
    expect(body.id).toMatch(/^dev_[0-9a-z]{26}$/);
    expect(res.headers.location).toBe(`/v1/devices/${body.id}`);
    expect(body).toMatchObject({
      imei: IMEI_A,
      model: 'FMB920',
      name: 'Van 12',
      group_id: 'north',
      driver_id: null,
      status: 'never_connected',
      last_seen_at: null,
      latest_position: null,
      driver: null,
      created_at: '2026-11-22T12:00:00.000Z',
    });
    const get = await h.app.inject({ method: 'GET', url: `/v1/devices/${body.id}`, headers: auth(apiKey) });
    expect(get.statusCode).toBe(200);
    expectDocumented(doc, 'GET', '/v1/devices/{id}', get);
    expect(get.json()).toEqual(body);
  });

  it('refuses an IMEI with a bad Luhn digit, pointing at the field', async () => {
    const { apiKey } = await h.newCustomer();
    const bad = IMEI_A.slice(0, 14) + String((Number(IMEI_A[14]) + 1) % 10);
    const res = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: auth(apiKey), payload: { imei: bad, model: 'X' } });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 400, code: 'validation_failed', errors: [{ pointer: '/body/imei' }] });
    expectDocumented(doc, 'POST', '/v1/devices', res);
  });

  it('reports schema violations as problem+json with pointers', async () => {
    const { apiKey } = await h.newCustomer();
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/devices',
      headers: auth(apiKey),
      payload: { imei: '12', colour: 'red' },
    });
    expect(res.statusCode).toBe(400);
    const pointers = (res.json().errors as Array<{ pointer: string }>).map((e) => e.pointer).sort();
    expect(pointers).toEqual(['/body/colour', '/body/imei', '/body/model']);
    expect(res.json().request_id).toMatch(/^req_/);
    expectDocumented(doc, 'POST', '/v1/devices', res);
  });

  it('gives 409 imei_taken for an IMEI registered by any tenant', async () => {
    const a = await h.newCustomer('A');
    const b = await h.newCustomer('B');
    const first = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: auth(a.apiKey), payload: { imei: IMEI_A, model: 'X' } });
    expect(first.statusCode).toBe(201);
    for (const key of [a.apiKey, b.apiKey]) {
      const again = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: auth(key), payload: { imei: IMEI_A, model: 'Y' } });
      expect(again.statusCode).toBe(409);
      expect(again.json().code).toBe('imei_taken');
      expectDocumented(doc, 'POST', '/v1/devices', again);
    }
  });

  it('gives 409 terminal_taken for a JT/T 808 terminal number already registered', async () => {
    const { apiKey } = await h.newCustomer();
    const ok = await h.app.inject({
      method: 'POST', url: '/v1/devices', headers: auth(apiKey), payload: { imei: IMEI_A, model: 'JC450', terminal_id: '013800138000' },
    });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().terminal_id).toBe('13800138000');
    const dup = await h.app.inject({
      method: 'POST', url: '/v1/devices', headers: auth(apiKey), payload: { imei: IMEI_B, model: 'JC450', terminal_id: '13800138000' },
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().code).toBe('terminal_taken');
    expectDocumented(doc, 'POST', '/v1/devices', dup);
  });

  it('takes the protocol a unit may log in with, and refuses one the gateway does not speak', async () => {
    const { apiKey } = await h.newCustomer();
    const bad = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: auth(apiKey), payload: { imei: IMEI_A, model: 'GT06N', protocol: 'nmea' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: { pointer: string }) => e.pointer)).toContain('/body/protocol');
    const ok = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: auth(apiKey), payload: { imei: IMEI_A, model: 'GT06N', protocol: 'gt06' } });
    expect(ok.statusCode).toBe(201);
    const [registered] = await h.store.readStream(`device-${ok.json().id as string}`);
    expect(registered).toMatchObject({ type: 'DeviceRegistered', data: { protocol: 'gt06' } });
    const [claim] = await h.store.readStream(`imei-${IMEI_A}`);
    expect(claim).toMatchObject({ type: 'ImeiClaimed', data: { protocol: 'gt06' } });
  });
});

describe('authentication and scopes', () => {
  it('401 without a credential, with WWW-Authenticate', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/v1/positions/latest' });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.json().code).toBe('unauthenticated');
  });

  it('401 for an unknown key', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/v1/positions/latest', headers: auth('fleet_key_nope') });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('invalid_credentials');
  });

  it('403 naming the missing scope; write implies read', async () => {
    const { customerId } = await h.newCustomer();
    const readOnly = await h.newKey(customerId, ['devices:read', 'positions:read']);
    const res = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: auth(readOnly), payload: { imei: IMEI_A, model: 'X' } });
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toContain('devices:write');
    expectDocumented(doc, 'POST', '/v1/devices', res);
    const writer = await h.newKey(customerId, ['devices:write']);
    const list = await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(writer) });
    expect(list.statusCode).toBe(200);
  });
});

describe('tenant isolation', () => {
  it("another customer's device is a 404 and never listed", async () => {
    const a = await h.newCustomer('A');
    const b = await h.newCustomer('B');
    const created = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: auth(a.apiKey), payload: { imei: IMEI_A, model: 'X' } });
    const id = created.json().id as string;
    const get = await h.app.inject({ method: 'GET', url: `/v1/devices/${id}`, headers: auth(b.apiKey) });
    expect(get.statusCode).toBe(404);
    expectDocumented(doc, 'GET', '/v1/devices/{id}', get);
    const list = await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(b.apiKey) });
    expect(list.json().data).toEqual([]);
    expectDocumented(doc, 'GET', '/v1/devices', list);
  });
});

describe('GET /v1/devices pagination', () => {
  it('walks pages without skipping or repeating while devices are added', async () => {
    const { apiKey } = await h.newCustomer();
    const register = async (i: number) => {
      h.clock.advance(1000);
      const r = await h.app.inject({
        method: 'POST', url: '/v1/devices', headers: auth(apiKey), payload: { imei: imeiFrom(`3569380356${String(i).padStart(4, '0')}`), model: 'X' },
      });
      expect(r.statusCode).toBe(201);
      return r.json().id as string;
    };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await register(i));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await h.app.inject({
        method: 'GET', url: `/v1/devices?limit=2${cursor ? `&cursor=${cursor}` : ''}`, headers: auth(apiKey),
      });
      expect(res.statusCode).toBe(200);
      expectDocumented(doc, 'GET', '/v1/devices', res);
      const body = res.json() as { data: Array<{ id: string }>; pagination: { next_cursor: string | null; has_more: boolean } };
      seen.push(...body.data.map((d) => d.id));
      cursor = body.pagination.next_cursor;
      expect(body.pagination.has_more).toBe(cursor !== null);
      if (pages === 0) ids.push(await register(99)); // a new device sorts last: it must appear once
      pages += 1;
    } while (cursor);
    expect(seen).toEqual([...ids].sort());
    const mismatch = await h.app.inject({
      method: 'GET',
      url: `/v1/devices?limit=2&status=online&cursor=${
        (await h.app.inject({ method: 'GET', url: '/v1/devices?limit=2', headers: auth(apiKey) })).json().pagination.next_cursor
      }`,
      headers: auth(apiKey),
    });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json().code).toBe('cursor_mismatch');
    expectDocumented(doc, 'GET', '/v1/devices', mismatch);
  });
});
