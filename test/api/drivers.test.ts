import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeviceEventRaised } from '../../core/events.js';
import { randomUuid } from '../../core/ids.js';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { ResponseValidator, expectDocumented, loadOpenApi } from '../support/openapi.js';

let h: ApiHarness;
let doc: ResponseValidator;
beforeEach(async () => {
  h = await startApiHarness();
  doc = new ResponseValidator(await loadOpenApi(h.app));
});

/** A request whose answer is checked against the OpenAPI document as it comes. */
async function documented(method: 'GET' | 'POST' | 'PATCH', url: string, headers: Record<string, string>, payload?: unknown) {
  const res = await h.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  expectDocumented(doc, method, doc.pathOf(url), res);
  return res;
}
afterEach(async () => {
  await h.close();
});

async function customer(name = 'Acme Haulage') {
  const c = await h.newCustomer(name);
  const headers = { authorization: `Bearer ${c.apiKey}` };
  const post = (url: string, payload: unknown) => documented('POST', url, headers, payload);
  const get = (url: string) => documented('GET', url, headers);
  const driver = async (payload: object) => (await post('/v1/drivers', payload)).json() as { id: string; name: string };
  return { ...c, headers, post, get, driver };
}

async function pointers(res: Awaited<ReturnType<ApiHarness['app']['inject']>>): Promise<string[]> {
  expect(res.statusCode).toBe(400);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  // A nullable field reports each branch of its union; the pointers are what matter here.
  return [...new Set((res.json().errors as Array<{ pointer: string }>).map((e) => e.pointer))];
}

describe('POST /v1/drivers', () => {
  it('creates a driver: 201, Location, the record', async () => {
    const { post, get } = await customer();
    const res = await post('/v1/drivers', { name: 'Anna Berzina', external_id: 'EMP-0042' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(res.headers.location).toBe(`/v1/drivers/${body.id}`);
    expect(body).toEqual({
      id: expect.stringMatching(/^drv_/), name: 'Anna Berzina', external_id: 'EMP-0042', score: null, current_vehicle: null,
      created_at: '2026-11-22T12:00:00.000Z',
    });
    expect((await get(res.headers.location as string)).json()).toEqual(body);
    expect((await post('/v1/drivers', { name: 'No Badge' })).json().external_id).toBeNull();
  });

  it('keeps external_id unique per customer (409), also under concurrent requests; other customers may reuse it', async () => {
    const a = await customer('A');
    expect((await a.post('/v1/drivers', { name: 'Anna', external_id: 'E1' })).statusCode).toBe(201);
    const dup = await a.post('/v1/drivers', { name: 'Anna again', external_id: 'E1' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({ code: 'external_id_taken', errors: [{ pointer: '/body/external_id' }] });
    const racing = await Promise.all([1, 2, 3].map((n) => a.post('/v1/drivers', { name: `Racer ${n}`, external_id: 'E2' })));
    expect(racing.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);
    const b = await customer('B');
    expect((await b.post('/v1/drivers', { name: 'Other Anna', external_id: 'E1' })).statusCode).toBe(201);
  });

  it('validates the body with pointers', async () => {
    const { post } = await customer();
    expect(await pointers(await post('/v1/drivers', {}))).toEqual(['/body/name']);
    expect(await pointers(await post('/v1/drivers', { name: '  ' }))).toEqual(['/body/name']);
    expect(await pointers(await post('/v1/drivers', { name: 'x'.repeat(129) }))).toEqual(['/body/name']);
    expect(await pointers(await post('/v1/drivers', { name: 'A', external_id: 'E'.repeat(129) }))).toEqual(['/body/external_id']);
    expect(await pointers(await post('/v1/drivers', { name: 'A', external_id: ['E1'] }))).toEqual(['/body/external_id']);
    expect(await pointers(await post('/v1/drivers', { name: 'A', licence: 'B' }))).toEqual(['/body/licence']);
  });
});

describe('driver access', () => {
  it('needs a credential (401) and the driver scopes (403 naming the missing one)', async () => {
    const { customerId } = await customer();
    expect((await documented('GET', '/v1/drivers', {})).statusCode).toBe(401);
    const readOnly = await h.newKey(customerId, ['drivers:read']);
    const denied = await documented('POST', '/v1/drivers', { authorization: `Bearer ${readOnly}` }, { name: 'A' });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().detail).toContain('drivers:write');
    const geofencesOnly = await h.newKey(customerId, ['geofences:write']);
    const list = await documented('GET', '/v1/drivers', { authorization: `Bearer ${geofencesOnly}` });
    expect(list.statusCode).toBe(403);
    expect(list.json().detail).toContain('drivers:read');
  });

  it('404s unknown ids and another customer\'s drivers; a second customer never sees the first\'s', async () => {
    const a = await customer('A');
    const b = await customer('B');
    const { id } = await a.driver({ name: 'Anna' });
    expect((await a.get('/v1/drivers/drv_nope')).statusCode).toBe(404);
    expect((await b.get(`/v1/drivers/${id}`)).statusCode).toBe(404);
    expect((await b.get(`/v1/drivers/${id}/score`)).statusCode).toBe(404);
    expect((await b.get('/v1/drivers')).json()).toEqual({ data: [], pagination: { next_cursor: null, has_more: false } });
  });
});

describe('GET /v1/drivers', () => {
  it('pages in id order; a driver created between pages shows up once', async () => {
    const { get, driver } = await customer();
    const ids: string[] = [];
    const add = async (n: number) => {
      h.clock.advance(1000);
      ids.push((await driver({ name: `Driver ${n}` })).id);
    };
    for (let n = 0; n < 5; n++) await add(n);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/v1/drivers?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = res.json() as { data: Array<{ id: string }>; pagination: { next_cursor: string | null } };
      seen.push(...body.data.map((d) => d.id));
      if (++pages === 1) await add(5);
      cursor = body.pagination.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);
  });
});

describe('device <-> driver link', () => {
  it('accepts a driver of the same customer on a device, and shows it on both sides', async () => {
    const a = await customer('A');
    const b = await customer('B');
    const anna = await a.driver({ name: 'Anna' });
    const res = await a.post('/v1/devices', { imei: imeiFrom('35693803564380'), model: 'FMB920', name: 'Van 7', driver_id: anna.id });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ driver_id: anna.id, driver: { id: anna.id, name: 'Anna' } });
    const deviceId = res.json().id as string;
    expect((await a.get(`/v1/drivers/${anna.id}`)).json().current_vehicle).toEqual({ device_id: deviceId, device_name: 'Van 7' });
    expect((await a.get('/v1/devices')).json().data[0].driver).toEqual({ id: anna.id, name: 'Anna' });

    const foreign = (await b.driver({ name: 'Bruno' })).id;
    for (const driver_id of [foreign, 'drv_unknown']) {
      const refused = await a.post('/v1/devices', { imei: imeiFrom('35693803564381'), model: 'FMB920', driver_id });
      expect(await pointers(refused)).toEqual(['/body/driver_id']);
    }

    // Reassigning the van moves the current vehicle from one driver to the other.
    const boris = await a.driver({ name: 'Boris' });
    const patched = await documented('PATCH', `/v1/devices/${deviceId}`, a.headers, { driver_id: boris.id });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().driver).toEqual({ id: boris.id, name: 'Boris' });
    expect((await a.get(`/v1/drivers/${anna.id}`)).json().current_vehicle).toBeNull();
    expect((await a.get(`/v1/drivers/${boris.id}`)).json().current_vehicle).toEqual({ device_id: deviceId, device_name: 'Van 7' });
    const foreignPatch = await documented('PATCH', `/v1/devices/${deviceId}`, a.headers, { driver_id: foreign });
    expect(await pointers(foreignPatch)).toEqual(['/body/driver_id']);
  });
});

describe('driver scores', () => {
  const DAY = Date.UTC(2026, 10, 20, 9, 0, 0);
  const KM_LAT = 1 / 111.195;

  async function drive() {
    const c = await customer();
    const anna = await c.driver({ name: 'Anna' });
    const device = await c.post('/v1/devices', { imei: imeiFrom('35693803564380'), model: 'FMB920', name: 'Van 7', driver_id: anna.id });
    const deviceId = device.json().id as string;
    // 10 km north at 60 km/h, a fix a minute.
    for (let i = 0; i <= 10; i++) {
      const r = await h.store.appendToStream(streams.telemetry(deviceId), [
        {
          id: randomUuid(),
          type: 'PositionRecorded',
          data: {
            device_id: deviceId, customer_id: c.customerId, protocol: 'teltonika', fix_time: DAY + i * 60_000, received_at: DAY + i * 60_000,
            valid: true, lat: 56.9 + i * KM_LAT, lng: 24.1, speed_kmh: 60, heading_deg: 0, altitude_m: null, satellites: 9, ignition: true,
            odometer_m: null, attributes: {},
          },
        },
      ]);
      await h.runner.waitFor(r.position);
    }
    const raise = async (kind: DeviceEventRaised['data']['kind'], at: number) => {
      const r = await h.store.appendToStream(streams.deviceEvents(deviceId), [
        {
          id: randomUuid(),
          type: 'DeviceEventRaised',
          data: {
            event_id: `evt_test_${at}`, kind, customer_id: c.customerId, device_id: deviceId, driver_id: anna.id, occurred_at: at,
            severity: 'medium', source: 'device', position: null, fields: {}, context: {}, media: [],
          },
        },
      ]);
      await h.runner.waitFor(r.position);
    };
    return { ...c, anna, raise };
  }

  it('gives one item per UTC day with distance, driving time, breakdown and score', async () => {
    const { get, anna, raise } = await drive();
    await raise('event.harsh_brake', DAY + 5 * 60_000);
    await raise('event.harsh_brake', DAY + 6 * 60_000);
    const res = await get(`/v1/drivers/${anna.id}/score?from=2026-11-20&to=2026-11-22`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ driver_id: anna.id, from: '2026-11-20', to: '2026-11-22' });
    expect(body.data.map((d: { date: string }) => d.date)).toEqual(['2026-11-20', '2026-11-21']);
    const [day, idle] = body.data;
    expect(day.distance_km).toBeCloseTo(10, 1);
    expect(day.driving_s).toBe(600);
    expect(day.breakdown['event.harsh_brake']).toEqual({ count: 2, per_100km: expect.closeTo(20, 1), points: expect.closeTo(40, 1) });
    expect(day.breakdown['alarm.adas.collision']).toEqual({ count: 0, per_100km: 0, points: 0 });
    expect(day.score).toBeCloseTo(60, 0); // 100 - 2 * 2 * 100 / 10
    expect(idle).toMatchObject({ date: '2026-11-21', score: null, distance_km: 0, driving_s: 0 });
    // The current score: the last 7 days of data, whatever the wall clock says.
    expect((await get(`/v1/drivers/${anna.id}`)).json().score).toBe(day.score);
    expect((await get('/v1/drivers')).json().data[0].score).toBe(day.score);
  });

  it('a late event lowers its own day', async () => {
    const { get, anna, raise } = await drive();
    const url = `/v1/drivers/${anna.id}/score?from=2026-11-20&to=2026-11-21`;
    expect((await get(url)).json().data[0].score).toBe(100);
    h.clock.advance(86_400_000);
    await raise('alarm.dsm.phone', DAY + 2 * 60_000);
    expect((await get(url)).json().data[0].score).toBeCloseTo(70, 0); // 100 - 3 * 1 * 100 / 10
  });

  it('defaults to the last 7 days and validates from/to', async () => {
    const { get, driver } = await customer();
    const { id } = await driver({ name: 'Anna' });
    const res = await get(`/v1/drivers/${id}/score`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ from: '2026-11-16', to: '2026-11-23' }); // the clock reads 2026-11-22
    expect(res.json().data).toHaveLength(7);
    expect(await pointers(await get(`/v1/drivers/${id}/score?from=2026-02-30`))).toEqual(['/query/from']);
    expect(await pointers(await get(`/v1/drivers/${id}/score?from=20261120`))).toEqual(['/query/from']);
    expect(await pointers(await get(`/v1/drivers/${id}/score?from=2026-11-20&to=2026-11-20`))).toEqual(['/query/to']);
    const wide = await get(`/v1/drivers/${id}/score?from=2026-01-01&to=2026-11-20`);
    expect(wide.statusCode).toBe(400);
    expect(wide.json().code).toBe('range_too_large');
  });
});
