import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PositionRecorded } from '../../core/events.js';
import { imeiFrom } from '../../core/imei.js';
import fastJson from 'fast-json-stringify';
import { LatestPositionsIndex } from '../../api/latest-positions-index.js';
import { createHash } from 'node:crypto';
import { historyItemJson } from '../../api/history-item.js';
import { sensorAttributes } from '../../api/sensor-attributes.js';
import { HistoryList, HistoryPosition, LatestPosition, fixBody } from '../../api/schemas/positions.js';
import { READ_MODEL_VERSION } from '../../projections/runner.js';
import { ListCursor, timeAndIdKey, withWindowEnd } from '../../api/pagination.js';
import { streams } from '../../core/streams.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { positionRecorded, raiseSos, recordPosition } from '../support/store-events.js';

let h: ApiHarness;
beforeEach(async () => {
  h = await startApiHarness();
});
afterEach(async () => {
  await h.close();
});

const T0 = Date.UTC(2026, 10, 20, 8, 0, 0);

async function setup() {
  const { apiKey, customerId } = await h.newCustomer();
  const res = await h.app.inject({
    method: 'POST', url: '/v1/devices', headers: { authorization: `Bearer ${apiKey}` },
    payload: { imei: imeiFrom('35693803564380'), model: 'FMB920', name: 'Van 7' },
  });
  const deviceId = res.json().id as string;
  /** Fix `i` seconds after T0, `i` thousandths of a degree north and `i` km/h over 40. */
  const record = (i: number, fix: Partial<PositionRecorded['data']> = {}) =>
    recordPosition(h, { customerId, deviceId }, T0 + i * 1000, {
      received_at: T0 + i * 1000 + 300, lat: 56.9 + i / 1000, speed_kmh: 40 + i, altitude_m: 12, satellites: 10, ...fix,
    });
  return { apiKey, customerId, deviceId, record, headers: { authorization: `Bearer ${apiKey}` } };
}

describe('GET /v1/positions/latest', () => {
  it('gives one item per device with the newest fix and its values', async () => {
    const { deviceId, record, headers } = await setup();
    await record(1);
    await record(3);
    await record(2); // late fix: does not replace the newer one
    const res = await h.app.inject({ method: 'GET', url: '/v1/positions/latest', headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      {
        device_id: deviceId, device_name: 'Van 7', lat: 56.903, lng: 24.1, speed_kmh: 43, heading_deg: 90, altitude_m: 12, satellites: 10,
        timestamp: '2026-11-20T08:00:03.000Z', received_at: '2026-11-20T08:00:03.300Z', ignition: true, attributes: { ignition: true },
      },
    ]);
    const device = await h.app.inject({ method: 'GET', url: `/v1/devices/${deviceId}`, headers });
    expect(device.json().latest_position).toMatchObject({ lat: 56.903, timestamp: '2026-11-20T08:00:03.000Z' });
    expect(device.json().latest_position.attributes).toBeUndefined();
  });

  it('carries the newest fix\'s sensor attributes, named as in the history', async () => {
    const { deviceId, record, headers } = await setup();
    const fix = { ignition: false, odometer_m: 1234.5, attributes: { io66: 12_800, io240: 0, io16: 1234, gsm_level: 4, driver_name: 'Ann' } };
    await record(1, fix);
    const latest = (await h.app.inject({ method: 'GET', url: '/v1/positions/latest', headers })).json().data[0];
    const history = (await h.app.inject({ method: 'GET', url: `/v1/positions?device_id=${deviceId}&from=2026-11-20T08:00:00Z&to=2026-11-20T09:00:00Z`, headers })).json().data[0];
    expect(latest.attributes).toEqual({
      ignition: false, movement: false, odometer_km: 1.2345, external_voltage_v: 12.8, gsm_signal: 4, driver_name: 'Ann', io: { '16': 1234, '66': 12_800, '240': 0 },
    });
    expect(latest.attributes).toEqual(history.attributes);
    // A newer fix brings its own values: none are carried over from the one before.
    await record(2, { ignition: null, attributes: { io21: 3 } });
    const next = (await h.app.inject({ method: 'GET', url: '/v1/positions/latest', headers })).json().data[0];
    expect(next.attributes).toEqual({ gsm_signal: 3, io: { '21': 3 } });
  });

  it('pages through the fleet by device id, a device added meanwhile showing up once', async () => {
    const { apiKey, customerId } = await h.newCustomer();
    const headers = { authorization: `Bearer ${apiKey}` };
    const addDevice = async (n: number) => {
      h.clock.advance(1000); // device ids sort by creation time
      const res = await h.app.inject({
        method: 'POST', url: '/v1/devices', headers, payload: { imei: imeiFrom(`3569380356400${n}`), model: 'FMB920', name: `Van ${n}` },
      });
      const id = res.json().id as string;
      await recordPosition(h, { customerId, deviceId: id }, T0);
      return id;
    };
    const ids = [];
    for (let n = 0; n < 5; n++) ids.push(await addDevice(n));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await h.app.inject({ method: 'GET', url: `/v1/positions/latest?limit=2${cursor ? `&cursor=${cursor}` : ''}`, headers });
      expect(res.statusCode).toBe(200);
      const body = res.json() as { data: Array<{ device_id: string }>; pagination: { next_cursor: string | null; has_more: boolean } };
      expect(body.data.length).toBeLessThanOrEqual(2);
      seen.push(...body.data.map((p) => p.device_id));
      if (seen.length === 2) ids.push(await addDevice(5));
      cursor = body.pagination.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    const filtered = await h.app.inject({ method: 'GET', url: `/v1/positions/latest?device_id=${ids[3]},${ids[1]}&limit=1`, headers });
    const next = filtered.json().pagination.next_cursor as string;
    const mismatch = await h.app.inject({ method: 'GET', url: `/v1/positions/latest?limit=1&cursor=${next}`, headers });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json().code).toBe('cursor_mismatch');
  });

  it('follows renames and regrouping, filters by group, and agrees with an index loaded afresh from the read model', async () => {
    const { customerId, deviceId, record, headers } = await setup();
    await record(1);
    const other = await h.app.inject({
      method: 'POST', url: '/v1/devices', headers, payload: { imei: imeiFrom('35693803564381'), model: 'FMB920', name: 'Van 8', group_id: 'south' },
    });
    const otherId = other.json().id as string;
    await recordPosition(h, { customerId, deviceId: otherId }, T0, {
      protocol: 'gt06', received_at: T0 + 100, lat: 50.5, lng: 20.25, speed_kmh: null, heading_deg: null, altitude_m: null, satellites: null, ignition: null,
    });
    const patch = await h.app.inject({ method: 'PATCH', url: `/v1/devices/${deviceId}`, headers, payload: { name: 'Van 7 (north)', group_id: 'north' } });
    expect(patch.statusCode).toBe(200);

    const north = await h.app.inject({ method: 'GET', url: '/v1/positions/latest?group_id=north', headers });
    expect(north.json().data.map((p: { device_id: string; device_name: string }) => [p.device_id, p.device_name])).toEqual([[deviceId, 'Van 7 (north)']]);
    const south = await h.app.inject({ method: 'GET', url: '/v1/positions/latest?group_id=south', headers });
    expect(south.json().data).toEqual([
      {
        device_id: otherId, device_name: 'Van 8', lat: 50.5, lng: 20.25, speed_kmh: null, heading_deg: null, altitude_m: null, satellites: null,
        timestamp: '2026-11-20T08:00:00.000Z', received_at: '2026-11-20T08:00:00.100Z', ignition: null, attributes: {},
      },
    ]);

    // A process started now loads the index from the read model: it must answer exactly as the one that followed the runner.
    const all = await h.app.inject({ method: 'GET', url: '/v1/positions/latest', headers });
    const fresh = LatestPositionsIndex.follow(h.readModelDb, () => () => undefined, fastJson(LatestPosition)).index;
    const page = fresh.page(customerId, { deviceIds: null, groupId: null, afterId: null, limit: 50 });
    expect(page.items.map((i) => JSON.parse(i.toString('utf8')) as unknown)).toEqual(all.json().data);
    expect(page.items).toHaveLength(2);
  });
});

describe('GET /v1/positions (history)', () => {
  it('pages through a window in fix-time order, nothing skipped or repeated while fixes arrive', async () => {
    const { deviceId, record, headers } = await setup();
    for (let i = 0; i < 5; i++) await record(i);
    const seen: string[] = [];
    let cursor: string | null = null;
    let first = true;
    do {
      const url: string = `/v1/positions?device_id=${deviceId}&from=2026-11-20T08:00:00Z&to=2026-11-20T09:00:00Z&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await h.app.inject({ method: 'GET', url, headers });
      expect(res.statusCode).toBe(200);
      const body = res.json() as { data: Array<{ timestamp: string }>; pagination: { next_cursor: string | null } };
      seen.push(...body.data.map((p) => p.timestamp));
      cursor = body.pagination.next_cursor;
      if (first) await record(10); // arrives while paging, after the cursor: must show up once
      first = false;
    } while (cursor);
    expect(seen).toEqual([0, 1, 2, 3, 4, 10].map((i) => new Date(T0 + i * 1000).toISOString()));
  });

  it('pages without `to` while the clock moves on: the walk keeps the window of its first page', async () => {
    const { deviceId, record, headers } = await setup();
    const start = h.clock.now();
    const fixAt = (ms: number) => record(0, { fix_time: start + ms, received_at: start + ms + 300 });
    for (const ms of [-5000, -4000, -3000, -2000]) await fixAt(ms);
    const from = new Date(start - 60_000).toISOString();
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/v1/positions?device_id=${deviceId}&from=${from}&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await h.app.inject({ method: 'GET', url, headers });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { data: Array<{ timestamp: string }>; pagination: { next_cursor: string | null } };
      seen.push(...body.data.map((p) => Date.parse(p.timestamp) - start));
      cursor = body.pagination.next_cursor;
      h.clock.advance(1000);
      if (++pages === 1) {
        await fixAt(-500); // inside the first page's window, after the cursor: shows up once
        await fixAt(200); // after the first page's "now": belongs to a later walk
      }
    } while (cursor);
    expect(seen).toEqual([-5000, -4000, -3000, -2000, -500]);

    const later = await h.app.inject({ method: 'GET', url: `/v1/positions?device_id=${deviceId}&from=${from}&limit=10`, headers });
    expect(later.json().data.map((p: { timestamp: string }) => Date.parse(p.timestamp) - start)).toEqual([-5000, -4000, -3000, -2000, -500, 200]);

    // The cursor of a walk without `to` is not one for an explicit `to`.
    const first = await h.app.inject({ method: 'GET', url: `/v1/positions?device_id=${deviceId}&from=${from}&limit=2`, headers });
    const to = new Date(start + 10_000).toISOString();
    const mismatch = await h.app.inject({
      method: 'GET', url: `/v1/positions?device_id=${deviceId}&from=${from}&to=${to}&limit=2&cursor=${first.json().pagination.next_cursor}`, headers,
    });
    expect(mismatch.json().code).toBe('cursor_mismatch');
  });

  it('refuses a cursor whose filters match but whose sort key was forged, as /v1/events does', async () => {
    const { customerId, deviceId, record, headers } = await setup();
    for (let i = 0; i < 3; i++) await record(i);
    const second = await h.app.inject({
      method: 'POST', url: '/v1/devices', headers, payload: { imei: imeiFrom('35693803564381'), model: 'FMB920', name: 'Van 8' },
    });
    const secondId = second.json().id as string;
    await recordPosition(h, { customerId, deviceId: secondId }, T0);
    for (let i = 0; i < 2; i++) await raiseSos(h, { customerId, deviceId }, T0 + i * 1000);
    /** The same cursor with its sort key (after the filter hash) replaced. */
    const forge = (cursor: string, key: string) => {
      const text = Buffer.from(cursor, 'base64url').toString('utf8');
      return Buffer.from(`${text.slice(0, text.indexOf('~'))}~${key}`).toString('base64url');
    };
    const lists: Array<[string, string[]]> = [
      [`/v1/positions?device_id=${deviceId}&from=2026-11-20T08:00:00Z&limit=1`, ['abc', 'NaN|evt', '1|2', '1795000000000|x|', '1795000000000|0x10|id', '-1|1|id']],
      [`/v1/positions?device_id=${deviceId}&from=2026-11-20T08:00:00Z&to=2026-11-20T09:00:00Z&order=desc&limit=1`, ['abc', ' 1|2|id']],
      ['/v1/positions/latest?limit=1', ['zzz', 'dev_', 'dev_01x|1', '1793491200000|evt_1']],
      ['/v1/events?limit=1', ['abc', 'NaN|evt']],
    ];
    for (const [url, keys] of lists) {
      const first = await h.app.inject({ method: 'GET', url, headers });
      const cursor = first.json().pagination.next_cursor as string | null;
      expect(cursor, url).not.toBeNull();
      const genuine = await h.app.inject({ method: 'GET', url: `${url}&cursor=${cursor}`, headers });
      expect(genuine.statusCode).toBe(200);
      for (const key of keys) {
        const res = await h.app.inject({ method: 'GET', url: `${url}&cursor=${forge(cursor!, key)}`, headers });
        expect(res.statusCode, `${url} ${key}`).toBe(400);
        expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        expect(res.json()).toMatchObject({ code: 'invalid_cursor', errors: [{ pointer: '/query/cursor', message: 'is malformed' }] });
      }
    }
  });

  it('answers the exact bytes the HistoryList schema serialises, page by page, in both orders', async () => {
    const { customerId, deviceId, headers } = await setup();
    const device = { customerId, deviceId };
    // Values at the edges of the item's shape: nulls, false, an invalid fix, fractions, negatives, a tie on fix time, a late fix.
    // Fixes of one millisecond are listed in the order they were stored (projections/history/key.ts), whatever their ids.
    const fixes: Array<[number, Partial<PositionRecorded['data']>]> = [
      [0, {}],
      [1, { valid: false, ignition: false, odometer_m: 123_456.7, lat: -33.868_82, lng: -151.209_29, speed_kmh: 0.1, heading_deg: 359.9 }],
      [2, { speed_kmh: null, heading_deg: null, altitude_m: null, satellites: null, ignition: null, odometer_m: 0 }],
      [2, { lat: 1e-7, lng: 179.999_999_9, altitude_m: -12.5, odometer_m: 1 }],
      [5, { received_at: T0 + 5000, odometer_m: 987_654_321.123 }],
      [3, { speed_kmh: 250, satellites: 0, altitude_m: 8848.86 }],
      [4, { fix_time: T0 + 4000 + 999, received_at: T0 + 86_400_000 + 1 }],
    ];
    const events = fixes.map(([i, fix]) => positionRecorded(device, T0 + i * 1000, fix));
    await h.store.appendToStream(streams.telemetry(deviceId), events);
    await h.runner.catchUp();
    const other = await h.newCustomer('Other');
    await recordPosition(h, { customerId: other.customerId, deviceId }, T0 + 1500); // another tenant's row under the same id: never listed
    const serialize = fastJson(HistoryList);
    const cursors = new ListCursor('positions', withWindowEnd(timeAndIdKey));
    const from = T0;
    const to = T0 + 3_600_000;
    const filters = (order: string) => ({ device_id: deviceId, from, to, order });
    const sorted = events
      .map((e) => e.data && { ...e.data, event_id: e.id! })
      .sort((a, b) => a.fix_time - b.fix_time); // stable: a tie keeps the log's order
    for (const order of ['asc', 'desc'] as const) {
      const all = order === 'asc' ? sorted : [...sorted].reverse();
      for (const limit of [1, 2, 3, 7, 100]) {
        let cursor: string | null = null;
        let at = 0;
        do {
          const url: string = `/v1/positions?device_id=${deviceId}&from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}&order=${order}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
          const res = await h.app.inject({ method: 'GET', url, headers });
          expect(res.statusCode).toBe(200);
          expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
          const page = all.slice(at, at + limit);
          const hasMore = at + limit < all.length;
          const last = page[page.length - 1]!;
          const expected = serialize({
            data: page.map((p) => ({
              device_id: p.device_id, ...fixBody(p), valid: p.valid, odometer_km: p.odometer_m === null ? null : p.odometer_m / 1000, attributes: sensorAttributes(p),
            })),
            pagination: { next_cursor: hasMore ? cursors.for(filters(order)).encode({ end: to, key: { t: last.fix_time, id: last.event_id } }) : null, has_more: hasMore },
          });
          expect(res.body, `${order} limit ${limit} at ${at}`).toBe(expected);
          at += limit;
          cursor = res.json().pagination.next_cursor as string | null;
        } while (cursor);
        expect(at).toBeGreaterThanOrEqual(all.length);
      }
    }
    const empty = await h.app.inject({ method: 'GET', url: `/v1/positions?device_id=${deviceId}&from=2026-11-21T00:00:00Z&to=2026-11-21T01:00:00Z`, headers });
    expect(empty.body).toBe('{"data":[],"pagination":{"next_cursor":null,"has_more":false}}');
  });

  it('keeps the item shape the stored history was encoded with: a change needs READ_MODEL_VERSION bumped', () => {
    // projections/history stores each fix's JSON; a read model built with another shape would answer the old one.
    // When this fails on purpose, bump READ_MODEL_VERSION (projections/runner.ts) and update both pins here.
    expect(READ_MODEL_VERSION).toBe(10);
    expect(createHash('sha256').update(JSON.stringify(HistoryPosition)).digest('hex').slice(0, 16)).toBe('6a1462fa0a1d6c39');
    expect(
      historyItemJson({
        device_id: 'dev_1', fix_time: T0, received_at: T0 + 400, valid: false, lat: -33.5, lng: 151.25, speed_kmh: null, heading_deg: 0,
        altitude_m: 12.5, satellites: null, ignition: false, odometer_m: 1234.5, attributes: { io66: 12_800, io240: 0, io16: 1234, gsm_level: 4 },
      }),
    ).toBe(
      '{"device_id":"dev_1","lat":-33.5,"lng":151.25,"speed_kmh":null,"heading_deg":0,"altitude_m":12.5,"satellites":null,' +
        '"timestamp":"2026-11-20T08:00:00.000Z","received_at":"2026-11-20T08:00:00.400Z","ignition":false,"valid":false,"odometer_km":1.2345,' +
        '"attributes":{"ignition":false,"movement":false,"odometer_km":1.2345,"external_voltage_v":12.8,"gsm_signal":4,"io":{"16":1234,"66":12800,"240":0}}}',
    );
  });

  it('refuses naive times, windows over 31 days, and unknown devices', async () => {
    const { deviceId, headers, record } = await setup();
    await record(1); // the device has a history: another customer still gets a 404, not its fixes nor an empty page
    const naive = await h.app.inject({ method: 'GET', url: `/v1/positions?device_id=${deviceId}&from=2026-11-20T08:00:00`, headers });
    expect(naive.statusCode).toBe(400);
    expect(naive.json().errors[0].pointer).toBe('/query/from');
    const wide = await h.app.inject({
      method: 'GET', url: `/v1/positions?device_id=${deviceId}&from=2026-09-01T00:00:00Z&to=2026-11-01T00:00:00Z`, headers,
    });
    expect(wide.json().code).toBe('range_too_large');
    const missing = await h.app.inject({ method: 'GET', url: '/v1/positions?from=2026-11-20T08:00:00Z', headers });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().errors[0].pointer).toBe('/query/device_id');
    const other = await h.newCustomer('Other');
    const foreign = await h.app.inject({
      method: 'GET', url: `/v1/positions?device_id=${deviceId}&from=2026-11-20T08:00:00Z`, headers: { authorization: `Bearer ${other.apiKey}` },
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('not_found');
    const unknown = await h.app.inject({ method: 'GET', url: '/v1/positions?device_id=dev_01kbxxxxxxxxxxxxxxxxxxxxxx&from=2026-11-20T08:00:00Z', headers });
    expect(unknown.statusCode).toBe(404);
  });
});
