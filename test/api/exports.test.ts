/**
 * Exports: a device's positions as CSV, GPX and KML, events as CSV, each
 * parsed back (csv-parse; fast-xml-parser's well-formedness check and the
 * GPX 1.1 / KML 2.2 structure) and compared with what was stored.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { positionRecorded, raiseSos } from '../support/store-events.js';

let h: ApiHarness;
beforeEach(async () => {
  h = await startApiHarness();
});
afterEach(async () => {
  await h.close();
});

const T0 = Date.UTC(2026, 10, 20, 6);
/** More than two export pages (1,000 fixes each). */
const FIXES = 2_345;
const WINDOW = `from=${new Date(T0).toISOString()}&to=${new Date(T0 + 86_400_000).toISOString()}`;

async function setup() {
  const { apiKey, customerId } = await h.newCustomer();
  const headers = { authorization: `Bearer ${apiKey}` };
  const res = await h.app.inject({ method: 'POST', url: '/v1/devices', headers, payload: { imei: imeiFrom('35693803564380'), model: 'FMB920' } });
  const deviceId = res.json().id as string;
  const events = Array.from({ length: FIXES }, (_, i) =>
    positionRecorded({ customerId, deviceId }, T0 + i * 10_000, { lat: 56.9 + i / 10_000, lng: 24.1 + i / 20_000, altitude_m: 10 + (i % 7), speed_kmh: i % 90 }),
  );
  const { position } = await h.store.appendToStream(streams.telemetry(deviceId), events);
  await h.waitFor(position);
  const get = (url: string) => h.app.inject({ method: 'GET', url, headers });
  return { customerId, deviceId, get, events };
}

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@' });

describe('GET /v1/positions?format=', () => {
  it('csv: a header and every fix of the window, oldest first, with a filename', async () => {
    const { deviceId, get, events } = await setup();
    const res = await get(`/v1/positions?device_id=${deviceId}&${WINDOW}&format=csv&limit=5`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="positions-${deviceId}-2026-11-20.csv"`);
    const rows = parseCsv(res.body, { columns: true }) as Array<Record<string, string>>;
    expect(rows).toHaveLength(FIXES);
    expect(rows.map((r) => r.timestamp)).toEqual(events.map((e) => new Date(e.data.fix_time).toISOString()));
    expect(Number(rows[1234]!.lat)).toBe(events[1234]!.data.lat);
    expect(rows[0]).toMatchObject({ device_id: deviceId, ignition: 'true', valid: 'true', altitude_m: '10' });
  });

  it('gpx: a well-formed GPX 1.1 track with a point per fix', async () => {
    const { deviceId, get, events } = await setup();
    const res = await get(`/v1/positions?device_id=${deviceId}&${WINDOW}&format=gpx`);
    expect(res.headers['content-type']).toBe('application/gpx+xml');
    expect(XMLValidator.validate(res.body)).toBe(true);
    const gpx = xml.parse(res.body).gpx;
    expect(gpx['@version']).toBe('1.1');
    expect(gpx['@xmlns']).toBe('http://www.topografix.com/GPX/1/1');
    const points = gpx.trk.trkseg.trkpt as Array<{ '@lat': string; '@lon': string; ele: number; time: string }>;
    expect(points).toHaveLength(FIXES);
    expect(points.map((p) => [Number(p['@lat']), Number(p['@lon']), p.time])).toEqual(
      events.map((e) => [e.data.lat, e.data.lng, new Date(e.data.fix_time).toISOString()]),
    );
    expect(points[3]!.ele).toBe(13);
  });

  it('kml: a well-formed KML 2.2 line string, longitude first', async () => {
    const { deviceId, get, events } = await setup();
    const res = await get(`/v1/positions?device_id=${deviceId}&${WINDOW}&format=kml`);
    expect(res.headers['content-type']).toBe('application/vnd.google-earth.kml+xml');
    expect(res.headers['content-disposition']).toMatch(/\.kml"$/);
    expect(XMLValidator.validate(res.body)).toBe(true);
    const kml = xml.parse(res.body).kml;
    expect(kml['@xmlns']).toBe('http://www.opengis.net/kml/2.2');
    const coordinates = String(kml.Document.Placemark.LineString.coordinates).trim().split(/\s+/);
    expect(coordinates).toHaveLength(FIXES);
    expect(coordinates[7]).toBe(`${events[7]!.data.lng},${events[7]!.data.lat},${events[7]!.data.altitude_m}`);
  });

  it("answers 404 for another customer's device and 400 for a window over 31 days, as problems", async () => {
    const { deviceId } = await setup();
    const other = await h.newCustomer('Other');
    const res = await h.app.inject({ method: 'GET', url: `/v1/positions?device_id=${deviceId}&${WINDOW}&format=csv`, headers: { authorization: `Bearer ${other.apiKey}` } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const wide = await h.app.inject({
      method: 'GET', url: `/v1/positions?device_id=${deviceId}&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&format=gpx`,
      headers: { authorization: `Bearer ${other.apiKey}` },
    });
    expect(wide.statusCode).toBe(400);
    expect(wide.json().code).toBe('range_too_large');
  });
});

describe('GET /v1/events?format=csv', () => {
  it('lists every event of the filters, with the kind fields as JSON', async () => {
    const { customerId, deviceId, get } = await setup();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await raiseSos(h, { customerId, deviceId }, T0 + i * 60_000));
    const res = await get('/v1/events?format=csv&limit=1');
    expect(res.headers['content-disposition']).toBe('attachment; filename="events.csv"');
    const rows = parseCsv(res.body, { columns: true }) as Array<Record<string, string>>;
    expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(rows[0]).toMatchObject({ kind: 'event.sos', device_id: deviceId });
    expect(() => JSON.parse(rows[0]!.fields!)).not.toThrow();
  });
});
