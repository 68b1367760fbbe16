import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeviceEventRaised } from '../../core/events.js';
import { randomUuid } from '../../core/ids.js';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { ResponseValidator, expectDocumented, loadOpenApi } from '../support/openapi.js';
import { positionRecorded } from '../support/store-events.js';

let h: ApiHarness;
let doc: ResponseValidator;
beforeEach(async () => {
  h = await startApiHarness();
  doc = new ResponseValidator(await loadOpenApi(h.app));
});
afterEach(async () => {
  await h.close();
});

const SQUARE = {
  type: 'Polygon',
  coordinates: [[[24.09, 56.945], [24.11, 56.945], [24.11, 56.955], [24.09, 56.955], [24.09, 56.945]]],
};

async function customer(name = 'Acme Haulage') {
  const c = await h.newCustomer(name);
  const headers = { authorization: `Bearer ${c.apiKey}` };
  // Every answer is checked against the OpenAPI document as it comes.
  const post = async (payload: unknown) => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/geofences', headers, payload: payload as object });
    expectDocumented(doc, 'POST', '/v1/geofences', res);
    return res;
  };
  const get = async (url: string) => {
    const res = await h.app.inject({ method: 'GET', url, headers });
    expectDocumented(doc, 'GET', doc.pathOf(url), res);
    return res;
  };
  const del = async (id: string) => {
    const res = await h.app.inject({ method: 'DELETE', url: `/v1/geofences/${id}`, headers });
    expectDocumented(doc, 'DELETE', '/v1/geofences/{id}', res);
    return res;
  };
  return { ...c, headers, post, get, del };
}

/** POSTs an invalid body; returns the pointers of the problem. */
type Post = (payload: unknown) => Promise<Awaited<ReturnType<ApiHarness['app']['inject']>>>;

async function pointers(post: Post, payload: unknown): Promise<string[]> {
  const res = await post(payload);
  expect(res.statusCode).toBe(400);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.json().code).toBe('validation_failed');
  return (res.json().errors as Array<{ pointer: string }>).map((e) => e.pointer);
}

describe('POST /v1/geofences', () => {
  it('creates a polygon from GeoJSON or a Feature, and a circle from centre and radius', async () => {
    const { post, get } = await customer();
    const res = await post({ name: 'Depot', geometry: SQUARE });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(res.headers.location).toBe(`/v1/geofences/${body.id}`);
    expect(body).toEqual({
      id: expect.stringMatching(/^geo_/), name: 'Depot', shape: 'polygon', geometry: SQUARE, center: null, radius_m: null, dwell_s: null,
      created_at: '2026-11-22T12:00:00.000Z',
    });
    expect((await get(res.headers.location as string)).json()).toEqual(body);

    const feature = await post({ name: 'Yard', geometry: { type: 'Feature', properties: { colour: 'red' }, geometry: SQUARE } });
    expect(feature.statusCode).toBe(201);
    expect(feature.json().geometry).toEqual(SQUARE);

    const circle = await post({ name: 'Client site', center: { lat: 56.95, lng: 24.1 }, radius_m: 250 });
    expect(circle.statusCode).toBe(201);
    expect(circle.json()).toMatchObject({ shape: 'circle', center: { lat: 56.95, lng: 24.1 }, radius_m: 250, geometry: { type: 'Polygon' } });
    const ring = circle.json().geometry.coordinates[0] as number[][];
    expect(ring).toHaveLength(65);
    expect(ring[0]).toEqual(ring[64]);
    expect(ring[0]![1]).toBeCloseTo(56.95 + 250 / 111_195, 5); // the first vertex is due north, 250 m away
  });

  it('refuses bodies that are not exactly one shape, with pointers', async () => {
    const { post } = await customer();
    expect(await pointers(post, { name: 'x' })).toEqual(['/body/geometry']);
    expect(await pointers(post, { name: 'x', geometry: SQUARE, center: { lat: 1, lng: 2 }, radius_m: 50 })).toEqual([
      '/body/geometry',
      '/body/center',
    ]);
    expect(await pointers(post, { name: 'x', center: { lat: 1, lng: 2 } })).toEqual(['/body/radius_m']);
    expect(await pointers(post, { name: 'x', radius_m: 100 })).toEqual(['/body/center']);
  });

  it('checks fields: name, radius range, centre range, unknown fields', async () => {
    const { post } = await customer();
    expect(await pointers(post, { geometry: SQUARE })).toEqual(['/body/name']);
    expect(await pointers(post, { name: '   ', geometry: SQUARE })).toEqual(['/body/name']);
    expect(await pointers(post, { name: 'x', center: { lat: 1, lng: 2 }, radius_m: 9 })).toEqual(['/body/radius_m']);
    expect(await pointers(post, { name: 'x', center: { lat: 1, lng: 2 }, radius_m: 100_001 })).toEqual(['/body/radius_m']);
    expect((await pointers(post, { name: 'x', center: { lat: 95, lng: 200 }, radius_m: 50 })).sort()).toEqual([
      '/body/center/lat',
      '/body/center/lng',
    ]);
    expect(await pointers(post, { name: 'x', geometry: SQUARE, colour: 'red' })).toEqual(['/body/colour']);
  });

  it('checks the GeoJSON: type, positions, closed rings, vertex count, crossings, holes', async () => {
    const { post } = await customer();
    const ring = SQUARE.coordinates[0]!;
    const polygon = (...rings: unknown[]) => ({ name: 'x', geometry: { type: 'Polygon', coordinates: rings } });
    expect(await pointers(post, { name: 'x', geometry: { type: 'LineString', coordinates: ring } })).toEqual(['/body/geometry/type']);
    expect(await pointers(post, { name: 'x', geometry: { type: 'Feature', properties: {} } })).toEqual(['/body/geometry/geometry']);
    expect(await pointers(post, { name: 'x', geometry: { type: 'Polygon', coordinates: [] } })).toEqual(['/body/geometry/coordinates']);
    expect(await pointers(post, polygon(ring.slice(0, 3)))).toEqual(['/body/geometry/coordinates/0']);
    expect(await pointers(post, polygon(ring.slice(0, 4)))).toEqual(['/body/geometry/coordinates/0']); // not closed
    // [lat, lng] instead of [lng, lat]: latitudes of 24 are fine, but not a longitude read as latitude 95.
    const swapped = ring.map(([lng, lat]) => [lat, lng! + 71]);
    expect(await pointers(post, polygon(swapped))).toEqual([0, 1, 2, 3, 4].map((i) => `/body/geometry/coordinates/0/${i}/1`));
    expect(await pointers(post, polygon([ring[0], ring[1], 'north', ring[3], ring[4]]))).toEqual(['/body/geometry/coordinates/0/2']);
    expect(
      await pointers(post, { name: 'x', geometry: { type: 'Feature', geometry: { type: 'Polygon', coordinates: [[ring[0], ring[1], [24.1, 56.95, 3, 4], ring[3], ring[4]]] } } }),
    ).toEqual(['/body/geometry/geometry/coordinates/0/2']);

    const many = Array.from({ length: 1001 }, (_, i) => [24.1 + 0.01 * Math.cos((i / 1001) * 2 * Math.PI), 56.95 + 0.01 * Math.sin((i / 1001) * 2 * Math.PI)]);
    const tooMany = await post(polygon([...many, many[0]]));
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().errors).toEqual([{ pointer: '/body/geometry/coordinates', message: expect.stringContaining('1001 vertices') }]);
    expect((await post(polygon([...many.slice(1), many[1]]))).statusCode).toBe(201); // exactly 1000 is fine

    const bowTie = await post(polygon([[24.09, 56.945], [24.11, 56.955], [24.11, 56.945], [24.09, 56.955], [24.09, 56.945]]));
    expect(bowTie.statusCode).toBe(400);
    expect(bowTie.json().errors).toEqual([{ pointer: '/body/geometry/coordinates', message: expect.stringContaining('cross') }]);

    const holeOutside = [[25.0, 57.0], [25.01, 57.0], [25.01, 57.01], [25.0, 57.0]];
    expect(await pointers(post, polygon(ring, holeOutside))).toEqual(['/body/geometry/coordinates/1']);
    const holeInside = [[24.099, 56.949], [24.101, 56.949], [24.101, 56.951], [24.099, 56.949]];
    expect((await post(polygon(ring, holeInside))).statusCode).toBe(201);
  });
});

describe('geofence access', () => {
  it('needs a credential (401) and the geofence scopes (403 naming the missing one)', async () => {
    const { customerId } = await customer();
    const none = await h.app.inject({ method: 'GET', url: '/v1/geofences' });
    expect(none.statusCode).toBe(401);
    expectDocumented(doc, 'GET', '/v1/geofences', none);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    const readOnly = await h.newKey(customerId, ['geofences:read']);
    const denied = await h.app.inject({
      method: 'POST', url: '/v1/geofences', headers: { authorization: `Bearer ${readOnly}` }, payload: { name: 'x', geometry: SQUARE },
    });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('insufficient_scope');
    expectDocumented(doc, 'POST', '/v1/geofences', denied);
    expect(denied.json().detail).toContain('geofences:write');
    expect((await h.app.inject({ method: 'GET', url: '/v1/geofences', headers: { authorization: `Bearer ${readOnly}` } })).statusCode).toBe(200);
    const devicesOnly = await h.newKey(customerId, ['devices:read']);
    const list = await h.app.inject({ method: 'GET', url: '/v1/geofences', headers: { authorization: `Bearer ${devicesOnly}` } });
    expect(list.statusCode).toBe(403);
    expect(list.json().detail).toContain('geofences:read');
  });

  it('404s unknown ids and another customer\'s geofences; a second customer never sees the first\'s', async () => {
    const a = await customer('A');
    const b = await customer('B');
    const id = (await a.post({ name: 'Depot', geometry: SQUARE })).json().id as string;
    expect((await a.get('/v1/geofences/geo_nope')).statusCode).toBe(404);
    const foreign = await b.get(`/v1/geofences/${id}`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('not_found');
    expect((await b.del(id)).statusCode).toBe(404);
    expect((await b.get('/v1/geofences')).json()).toEqual({ data: [], pagination: { next_cursor: null, has_more: false } });
    expect((await a.get(`/v1/geofences/${id}`)).statusCode).toBe(200);
  });

  it('deletes with 204, then 404 forever', async () => {
    const { post, get, del } = await customer();
    const id = (await post({ name: 'Depot', geometry: SQUARE })).json().id as string;
    const deleted = await del(id);
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect((await get(`/v1/geofences/${id}`)).statusCode).toBe(404);
    expect((await del(id)).statusCode).toBe(404);
    expect((await get('/v1/geofences')).json().data).toEqual([]);
  });
});

describe('GET /v1/geofences', () => {
  it('pages in id order; a geofence created between pages shows up once', async () => {
    const { post, get } = await customer();
    const ids: string[] = [];
    const add = async (n: number) => {
      h.clock.advance(1000); // ids sort by creation time
      ids.push((await post({ name: `G${n}`, center: { lat: 56.9 + n / 100, lng: 24.1 }, radius_m: 100 })).json().id as string);
    };
    for (let n = 0; n < 5; n++) await add(n);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/v1/geofences?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = res.json() as { data: Array<{ id: string }>; pagination: { next_cursor: string | null; has_more: boolean } };
      expect(body.data.length).toBeLessThanOrEqual(2);
      expect(body.pagination.has_more).toBe(body.pagination.next_cursor !== null);
      seen.push(...body.data.map((g) => g.id));
      if (++pages === 1) await add(5);
      cursor = body.pagination.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    expect((await get('/v1/geofences?limit=201')).json().errors[0].pointer).toBe('/query/limit');
    const bad = await get('/v1/geofences?cursor=bm9wZQ');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].pointer).toBe('/query/cursor');
  });
});

describe('PATCH /v1/geofences/{id} and geofence.dwell', () => {
  it('sets and clears dwell_s, and a device staying that long raises geofence.dwell once per visit', async () => {
    const { post, get, headers, customerId } = await customer();
    const created = await post({ name: 'Depot', geometry: SQUARE, dwell_s: 600 });
    expect(created.json().dwell_s).toBe(600);
    const id = created.json().id as string;
    const patch = async (payload: unknown, hdrs = headers) => {
      const res = await h.app.inject({ method: 'PATCH', url: `/v1/geofences/${id}`, headers: hdrs, payload: payload as object });
      expectDocumented(doc, 'PATCH', '/v1/geofences/{id}', res);
      return res;
    };
    const lowered = await patch({ dwell_s: 300 });
    expect(lowered.statusCode).toBe(200);
    expect(lowered.json()).toEqual({ ...created.json(), dwell_s: 300 });
    expect((await get(`/v1/geofences/${id}`)).json().dwell_s).toBe(300);
    expect((await patch({})).json().dwell_s).toBe(300);
    const other = await h.newCustomer('Other');
    expect((await patch({ dwell_s: 60 }, { authorization: `Bearer ${other.apiKey}` })).statusCode).toBe(404);
    expect((await h.app.inject({ method: 'PATCH', url: '/v1/geofences/geo_01j00000000000000000000000', headers, payload: { dwell_s: 60 } })).statusCode).toBe(404);

    const device = await h.app.inject({ method: 'POST', url: '/v1/devices', headers, payload: { imei: imeiFrom('35693803564381'), model: 'FMB920' } });
    const deviceId = device.json().id as string;
    const T = Date.UTC(2026, 10, 22, 8, 0, 0);
    // Parked inside for ten minutes, out, back in for three (short of the five): one dwell.
    const minutes = [...[0, 2, 4, 6, 8, 10].map((m) => [m, 56.95]), [12, 56.97], ...[14, 15, 17].map((m) => [m, 56.95])] as Array<[number, number]>;
    const { position } = await h.store.appendToStream(
      streams.telemetry(deviceId),
      minutes.map(([m, lat]) => positionRecorded({ customerId, deviceId }, T + m * 60_000, { lat, lng: 24.1, speed_kmh: 0 })),
    );
    await h.runner.waitFor(position);
    let dwells: Array<{ id: string; occurred_at: string; dwell_s: number; geofence_id: string }> = [];
    for (let attempt = 0; attempt < 50 && dwells.length === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20)); // derived events leave through the outbox after the commit
      dwells = (await get('/v1/events?kind=geofence.dwell')).json().data;
    }
    expect(dwells.map((e) => [e.occurred_at, e.geofence_id, e.dwell_s])).toEqual([[new Date(T + 6 * 60_000).toISOString(), id, 360]]);
    // null clears it.
    expect((await patch({ dwell_s: null })).json().dwell_s).toBeNull();
  });
});

describe('crossings end to end', () => {
  it('a device driving into and out of a geofence created over the API raises enter and exit', async () => {
    const { post, customerId, headers } = await customer();
    const geofenceId = (await post({ name: 'Depot', geometry: SQUARE })).json().id as string;
    const device = await h.app.inject({ method: 'POST', url: '/v1/devices', headers, payload: { imei: imeiFrom('35693803564380'), model: 'FMB920' } });
    const deviceId = device.json().id as string;
    const T = Date.UTC(2026, 10, 22, 8, 0, 0);
    for (const [i, lat] of [56.93, 56.95, 56.951, 56.97].entries()) {
      const r = await h.store.appendToStream(streams.telemetry(deviceId), [
        {
          id: randomUuid(),
          type: 'PositionRecorded',
          data: {
            device_id: deviceId, customer_id: customerId, protocol: 'teltonika', fix_time: T + i * 60_000, received_at: T + i * 60_000, valid: true,
            lat, lng: 24.1, speed_kmh: 30, heading_deg: 0, altitude_m: null, satellites: 9, ignition: true, odometer_m: null, attributes: {},
          },
        },
      ]);
      await h.runner.waitFor(r.position);
    }
    let raised: DeviceEventRaised['data'][] = [];
    for (let attempt = 0; attempt < 50 && raised.length < 2; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20)); // derived events leave through the outbox after the commit
      raised = (await h.store.readStream(streams.deviceEvents(deviceId)))
        .filter((e) => e.type === 'DeviceEventRaised')
        .map((e) => e.data as DeviceEventRaised['data'])
        .filter((d) => d.kind.startsWith('geofence.'));
    }
    expect(raised.map((d) => [d.kind, d.fields.geofence_id, d.fields.dwell_s ?? null])).toEqual([
      ['geofence.enter', geofenceId, null],
      ['geofence.exit', geofenceId, 120],
    ]);
  });
});
