/** GET /v1/trips, /v1/stops, /v1/idling (JSON pages and CSV), accumulators and trip rules, over the in-process API. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { positionRecorded } from '../support/store-events.js';
import { PlannedRoute, type Leg } from '../simulator/planned-route.js';

let h: ApiHarness;
beforeEach(async () => {
  h = await startApiHarness();
});
afterEach(async () => {
  await h.close();
});

const T0 = Date.UTC(2026, 10, 20, 6);
const LEGS: Leg[] = [
  { park_s: 600 },
  { drive_km: 4, speed_kmh: 50, heading_deg: 0 },
  { idle_s: 240 },
  { drive_km: 2, speed_kmh: 40, heading_deg: 90 },
  { park_s: 900 },
  { drive_km: 5, speed_kmh: 60, heading_deg: 180 },
  { park_s: 900 },
];

async function setup(name = 'Acme') {
  const { apiKey, customerId } = await h.newCustomer(name);
  const headers = { authorization: `Bearer ${apiKey}` };
  const res = await h.app.inject({ method: 'POST', url: '/v1/devices', headers, payload: { imei: imeiFrom(`3569380356${String(Math.floor(Math.random() * 1e4)).padStart(4, '0')}`), model: 'FMB920' } });
  const deviceId = res.json().id as string;
  const drive = async (legs = LEGS, startTime = T0) => {
    const plan = new PlannedRoute({ startLat: 56.95, startLng: 24.1, startTime, intervalS: 10, legs });
    const events = plan.points.map((p) =>
      positionRecorded({ customerId, deviceId }, p.fixTime, {
        lat: p.lat, lng: p.lng, speed_kmh: p.speedKmh, heading_deg: p.headingDeg, ignition: p.ignition, odometer_m: null, received_at: p.fixTime + 500,
      }),
    );
    const { position } = await h.store.appendToStream(streams.telemetry(deviceId), events);
    await h.waitFor(position);
    return plan;
  };
  const get = (url: string, hdrs = headers) => h.app.inject({ method: 'GET', url, headers: hdrs });
  return { apiKey, customerId, deviceId, headers, drive, get };
}

describe('GET /v1/trips, /v1/stops, /v1/idling', () => {
  it('lists the trips driven, with distance, times, speeds, idling and the accumulators at both ends', async () => {
    const { deviceId, drive, get } = await setup();
    const plan = await drive();
    const res = await get(`/v1/trips?device_id=${deviceId}`);
    expect(res.statusCode).toBe(200);
    const trips = res.json().data;
    expect(trips.map((t: { start: { time: string }; end: { time: string } }) => [t.start.time, t.end.time])).toEqual(
      plan.trips.map((t) => [new Date(t.start).toISOString(), new Date(t.end!).toISOString()]),
    );
    const first = trips[0];
    expect(first.distance_km).toBeCloseTo(6, 1);
    expect(first.duration_s).toBe((plan.trips[0]!.end! - plan.trips[0]!.start) / 1000);
    expect(first.idle_s).toBe(240);
    expect(first.max_speed_kmh).toBe(50);
    expect(first.avg_speed_kmh).toBeCloseTo((first.distance_km / first.duration_s) * 3600, 1);
    expect(first.start.odometer_km).toBe(0);
    expect(first.end.odometer_km).toBeCloseTo(first.distance_km, 1);
    expect(first.end.engine_hours).toBeCloseTo(first.duration_s / 3600, 2);
    expect(trips[1].start.odometer_km).toBeCloseTo(first.end.odometer_km, 3);

    const stops = (await get(`/v1/stops?device_id=${deviceId}`)).json().data;
    expect(stops.map((s: { start: string; end: string | null }) => [s.start, s.end])).toEqual([
      [new Date(T0).toISOString(), new Date(plan.trips[0]!.start).toISOString()],
      ...plan.stops.map((s) => [new Date(s.start).toISOString(), s.end === null ? null : new Date(s.end).toISOString()]),
    ]);
    // The last stop lasts while the device reports from it.
    expect(stops.at(-1).duration_s).toBe((plan.points.at(-1)!.fixTime - plan.stops.at(-1)!.start) / 1000);
    const idling = (await get(`/v1/idling?device_id=${deviceId}`)).json().data;
    expect(idling).toEqual([
      {
        device_id: deviceId, start: new Date(plan.idles[0]!.start).toISOString(), end: new Date(plan.idles[0]!.end!).toISOString(), duration_s: 240,
        lat: expect.any(Number), lng: expect.any(Number), geofences: [],
      },
    ]);
  });

  it('pages by start time with a cursor bound to the filters, and filters by window', async () => {
    const { drive, get } = await setup();
    const plan = await drive();
    const first = await get('/v1/trips?limit=1');
    expect(first.json().data).toHaveLength(1);
    expect(first.json().pagination.has_more).toBe(true);
    const second = await get(`/v1/trips?limit=1&cursor=${first.json().pagination.next_cursor}`);
    expect(second.json().data[0].start.time).toBe(new Date(plan.trips[1]!.start).toISOString());
    const mismatch = await get(`/v1/trips?limit=1&device_id=dev_x&cursor=${first.json().pagination.next_cursor}`);
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json().code).toBe('cursor_mismatch');
    const windowed = await get(`/v1/trips?from=${new Date(plan.trips[1]!.start).toISOString()}`);
    expect(windowed.json().data).toHaveLength(1);
    const backwards = await get('/v1/trips?from=2026-11-21T00:00:00Z&to=2026-11-20T00:00:00Z');
    expect(backwards.statusCode).toBe(400);
    expect(backwards.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('exports every trip, stop and idle of the window as CSV with a filename', async () => {
    const { drive, get } = await setup();
    const plan = await drive();
    const res = await get('/v1/trips?format=csv');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="trips.csv"');
    const lines = res.body.trimEnd().split('\r\n');
    expect(lines[0]!.split(',')).toEqual(expect.arrayContaining(['device_id', 'start_time', 'end_time', 'distance_km', 'idle_s']));
    expect(lines).toHaveLength(1 + plan.trips.length);
    const header = lines[0]!.split(',');
    expect(lines[1]!.split(',')[header.indexOf('start_time')]).toBe(new Date(plan.trips[0]!.start).toISOString());
    const stops = await get('/v1/stops?format=csv');
    expect(stops.headers['content-disposition']).toBe('attachment; filename="stops.csv"');
    expect(stops.body.trimEnd().split('\r\n')).toHaveLength(1 + plan.stops.length + 1);
    const idling = await get('/v1/idling?format=csv');
    expect(idling.headers['content-disposition']).toBe('attachment; filename="idling.csv"');
  });

  it('names the geofences each trip starts and ends in and each stop stands in, in JSON and CSV', async () => {
    const { headers, deviceId, drive, get } = await setup();
    const circle = async (name: string, at: { lat: number; lng: number }, hdrs = headers) => {
      const res = await h.app.inject({ method: 'POST', url: '/v1/geofences', headers: hdrs, payload: { name, center: at, radius_m: 300 } });
      expect(res.statusCode).toBe(201);
      return res.json().id as string;
    };
    // The depot where the day starts (the planned route's first point), and a yard 4 km north where the first drive ends.
    const depot = await circle('Depot', { lat: 56.95, lng: 24.1 });
    const yard = await circle('Yard', { lat: 56.95 + 4 / 111.195, lng: 24.1 });
    const other = await h.newCustomer('Other');
    await circle('Not ours', { lat: 56.95, lng: 24.1 }, { authorization: `Bearer ${other.apiKey}` });
    await drive();
    const trips = (await get(`/v1/trips?device_id=${deviceId}`)).json().data;
    expect(trips[0].start.geofences).toEqual([depot]);
    expect(trips[0].end.geofences).toEqual([]);
    const stops = (await get(`/v1/stops?device_id=${deviceId}`)).json().data;
    expect(stops[0].geofences).toEqual([depot]);
    const idling = (await get(`/v1/idling?device_id=${deviceId}`)).json().data;
    expect(idling[0].geofences).toEqual([yard]);

    const csv = (await get(`/v1/trips?device_id=${deviceId}&format=csv`)).body.trimEnd().split('\r\n');
    const header = csv[0]!.split(',');
    expect(header.slice(-2)).toEqual(['start_geofences', 'end_geofences']);
    expect(csv[1]!.split(',')[header.indexOf('start_geofences')]).toBe(depot);
    const stopsCsv = (await get(`/v1/stops?device_id=${deviceId}&format=csv`)).body.trimEnd().split('\r\n');
    expect(stopsCsv[0]!.split(',').at(-1)).toBe('geofences');
    expect(stopsCsv[1]!.split(',').at(-1)).toBe(depot);
  });

  it("never shows another customer's trips", async () => {
    const { deviceId, drive } = await setup();
    await drive();
    const other = await setup('Other');
    expect((await other.get('/v1/trips')).json().data).toEqual([]);
    expect((await other.get(`/v1/trips?device_id=${deviceId}`)).json().data).toEqual([]);
    expect((await other.get(`/v1/devices/${deviceId}/accumulators`)).statusCode).toBe(404);
  });
});

describe('accumulators', () => {
  it('continues the odometer from a value set, and keeps engine hours to ignition-on time', async () => {
    const { deviceId, headers, drive, get } = await setup();
    const firstDay = LEGS.slice(0, 5);
    await drive(firstDay);
    const before = (await get(`/v1/devices/${deviceId}/accumulators`)).json();
    expect(before.odometer_km).toBeCloseTo(6, 1);
    const put = await h.app.inject({ method: 'PUT', url: `/v1/devices/${deviceId}/accumulators`, headers, payload: { odometer_km: 100_000, engine_hours: 2500 } });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toEqual({ device_id: deviceId, odometer_km: 100_000, engine_hours: 2500 });
    const refused = await h.app.inject({ method: 'PUT', url: `/v1/devices/${deviceId}/accumulators`, headers, payload: {} });
    expect(refused.statusCode).toBe(400);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    const unknown = await h.app.inject({ method: 'PUT', url: '/v1/devices/dev_01j00000000000000000000000/accumulators', headers, payload: { odometer_km: 1 } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('not_found');

    // The next day: 6 km more, with the ignition on for the two drives and the idle between them.
    const next = await drive(firstDay, T0 + 86_400_000);
    const after = (await get(`/v1/devices/${deviceId}/accumulators`)).json();
    expect(after.odometer_km - 100_000).toBeCloseTo(before.odometer_km, 2);
    const ignitionOnS = (next.trips[0]!.end! - next.trips[0]!.start) / 1000;
    expect(after.engine_hours).toBeCloseTo(2500 + ignitionOnS / 3600, 3);
  });

  it('refuses to set accumulators without devices:write', async () => {
    const { customerId, deviceId } = await setup();
    const readOnly = await h.newKey(customerId, ['devices:read']);
    const res = await h.app.inject({ method: 'PUT', url: `/v1/devices/${deviceId}/accumulators`, headers: { authorization: `Bearer ${readOnly}` }, payload: { odometer_km: 1 } });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('insufficient_scope');
  });
});

describe('GET/PUT /v1/settings/trips', () => {
  it('answers the defaults, takes new rules with defaults for what is left out, and refuses rules out of bounds', async () => {
    const { headers, get } = await setup();
    const defaults = (await get('/v1/settings/trips')).json();
    expect(defaults).toEqual({ trip_source: 'auto', moving_speed_kmh: 5, min_trip_distance_m: 500, min_trip_duration_s: 60, min_stop_duration_s: 180, min_idle_duration_s: 120 });
    const put = await h.app.inject({ method: 'PUT', url: '/v1/settings/trips', headers, payload: { min_stop_duration_s: 600, trip_source: 'motion' } });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toEqual({ ...defaults, min_stop_duration_s: 600, trip_source: 'motion' });
    expect((await get('/v1/settings/trips')).json()).toEqual(put.json());
    const bad = await h.app.inject({ method: 'PUT', url: '/v1/settings/trips', headers, payload: { min_stop_duration_s: 5 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].pointer).toBe('/body/min_stop_duration_s');
  });
});
