/**
 * GET /v1/events, /v1/events/{id} and /v1/feed over the real projections:
 * telemetry goes into the store, the safety detector derives events through
 * the runner's outbox, and they come back into the events read model.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AlarmReported, DeviceEventRaised } from '../../core/events.js';
import { randomUuid } from '../../core/ids.js';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { createCustomer } from '../../core/commands/customers.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { ResponseValidator, expectDocumented, loadOpenApi } from '../support/openapi.js';
import { recordPosition, reportAlarm } from '../support/store-events.js';

let h: ApiHarness;
let doc: ResponseValidator;
beforeEach(async () => {
  h = await startApiHarness();
  doc = new ResponseValidator(await loadOpenApi(h.app));
});
afterEach(async () => {
  await h.close();
});

const T0 = Date.UTC(2026, 11, 1, 7, 30, 0);
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

interface Item {
  id: string;
  kind: string;
  severity: string;
  occurred_at: string;
  driver_id: string | null;
  sequence?: number;
  [field: string]: unknown;
}
interface Page {
  data: Item[];
  pagination: { next_cursor: string | null; has_more: boolean };
}

/** Resolves once the customer's events read model holds `n` rows (derived events make a round trip through the store). */
async function waitForEvents(customerId: string, n: number): Promise<void> {
  const count = h.runner.db.prepare('SELECT count(*) FROM device_events WHERE customer_id = ?').pluck();
  for (let i = 0; i < 200; i++) {
    await h.runner.catchUp();
    if ((count.get(customerId) as number) >= n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`expected ${n} events for ${customerId}, have ${String(count.get(customerId))}`);
}

async function van(apiKey: string, imeiBody: string, extra: Record<string, unknown> = {}) {
  const res = await h.app.inject({
    method: 'POST', url: '/v1/devices', headers: { authorization: `Bearer ${apiKey}` },
    payload: { imei: imeiFrom(imeiBody), model: 'FMB920', name: 'Van 7', ...extra },
  });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; speed_limit_kmh: number | null };
}

/** Telemetry of the device `s` seconds after T0: fixes heading north a little each second, alarms, and its driver changing. */
function telemetry(deviceId: string, customerId: string) {
  const device = { customerId, deviceId };
  return {
    fix: (s: number, speed: number) => recordPosition(h, device, T0 + s * 1000, { lat: 56.95 + s * 0.0001, speed_kmh: speed }),
    alarm: (s: number, kind: AlarmReported['data']['kind'], alarm: Partial<AlarmReported['data']> = {}) =>
      reportAlarm(h, device, T0 + s * 1000, kind, alarm),
    driver: (driverId: string) =>
      h.store.appendToStream(streams.device(deviceId), [
        {
          id: randomUuid(),
          type: 'DeviceUpdated',
          data: { device_id: deviceId, customer_id: customerId, changes: { driver_id: driverId }, updated_at: T0 },
        },
      ]),
  };
}

/**
 * A morning of one van (limit 90 km/h): a harsh brake at 1 s, a harsh
 * acceleration at 20 s, SOS at 30 s, overspeed at 40 s; then the driver
 * changes, and the camera reports a collision warning at 50 s and fatigue
 * at 55 s. Six events.
 */
async function morning() {
  const { customerId, apiKey } = await h.newCustomer();
  const device = await van(apiKey, '35693803564380', { speed_limit_kmh: 90 });
  const t = telemetry(device.id, customerId);
  await t.driver('drv_anna');
  for (const [i, v] of [62, 60, 48, 36, 25, 22, 22].entries()) await t.fix(i, v);
  for (const [i, v] of [0, 10, 21, 30, 32].entries()) await t.fix(20 + i, v);
  await t.alarm(30, 'event.sos');
  await t.fix(40, 95);
  await t.driver('drv_boris');
  const label = '31323334353637261201073050' + '0301' + '00'; // JT/T 808 alarm label: serial 3, 1 attachment
  await t.alarm(50, 'alarm.adas.collision', { protocol: 'jt808', level: 2, details: { item: '0x64', alarm_id: 77, flag: 1, type: 1, label } });
  await t.alarm(55, 'alarm.dsm.fatigue', { protocol: 'jt808', level: 1, details: { item: '0x65', alarm_id: 78, flag: 0, type: 1, label } });
  await t.fix(70, 50);
  await waitForEvents(customerId, 6);
  return { customerId, apiKey, deviceId: device.id, t, headers: { authorization: `Bearer ${apiKey}` } };
}

async function get(url: string, headers: Record<string, string>) {
  return h.app.inject({ method: 'GET', url, headers });
}

describe('GET /v1/events', () => {
  it('lists the van\'s events newest first, each shaped like its webhook payload', async () => {
    const { deviceId, headers } = await morning();
    const res = await get('/v1/events', headers);
    expect(res.statusCode).toBe(200);
    expectDocumented(doc, 'GET', '/v1/events', res);
    const body = res.json() as Page;
    expect(body.data.map((e) => e.kind)).toEqual([
      'alarm.dsm.fatigue', 'alarm.adas.collision', 'event.overspeed', 'event.sos', 'event.acceleration', 'event.harsh_brake',
    ]);
    expect(body.pagination).toEqual({ next_cursor: null, has_more: false });
    const brake = body.data[5]!;
    expect(brake).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-z]{26}$/) as unknown as string,
      kind: 'event.harsh_brake',
      severity: 'high',
      occurred_at: at(1),
      device_id: deviceId,
      device_name: 'Van 7',
      driver_id: 'drv_anna',
      source: 'server',
      position: { lat: 56.95 + 0.0001, lng: 24.1, speed_kmh: 60, heading_deg: 90, timestamp: at(1) },
      delta_kmh: -35,
      duration_ms: 3000,
    });
    expect(body.data[2]).toMatchObject({ kind: 'event.overspeed', limit_kmh: 90, delta_kmh: 5, severity: 'medium', driver_id: 'drv_anna' });
    expect(body.data[1]).toMatchObject({ source: 'device', severity: 'critical', alarm_level: 2, media_count: 1, driver_id: 'drv_boris' });
    expect(body.data[4]).toMatchObject({ delta_kmh: 21, severity: 'medium' });
  });

  it('filters by kind (exact and prefix.*), severity, device, driver and a half-open time range, in either order', async () => {
    const { deviceId, headers } = await morning();
    const kinds = async (query: string) => {
      const res = await get(`/v1/events?${query}`, headers);
      expect(res.statusCode).toBe(200);
      expectDocumented(doc, 'GET', '/v1/events', res);
      return (res.json() as Page).data.map((e) => e.kind);
    };
    expect(await kinds('kind=alarm.*')).toEqual(['alarm.dsm.fatigue', 'alarm.adas.collision']);
    expect(await kinds('kind=event.harsh_brake,alarm.dsm.*')).toEqual(['alarm.dsm.fatigue', 'event.harsh_brake']);
    expect(await kinds('severity=critical')).toEqual(['alarm.adas.collision', 'event.sos']);
    expect(await kinds('severity=high,critical&kind=event.*')).toEqual(['event.sos', 'event.harsh_brake']);
    expect(await kinds('driver_id=drv_boris')).toEqual(['alarm.dsm.fatigue', 'alarm.adas.collision']);
    expect(await kinds(`device_id=${deviceId}&from=${at(20)}&to=${at(50)}&order=asc`)).toEqual([
      'event.acceleration', 'event.sos', 'event.overspeed',
    ]);
    expect(await kinds(`from=2026-12-01T09:30:30%2B02:00`)).toEqual(['alarm.dsm.fatigue', 'alarm.adas.collision', 'event.overspeed', 'event.sos']);
    expect(await kinds('device_id=dev_someone_else')).toEqual([]);
  });

  it('refuses naive times, unknown kinds, reversed ranges and unknown parameters', async () => {
    const { headers } = await morning();
    const naive = await get('/v1/events?from=2026-12-01T07:30:00', headers);
    expect(naive.statusCode).toBe(400);
    expect(naive.json()).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/query/from' }] });
    expectDocumented(doc, 'GET', '/v1/events', naive);
    const unknown = await get('/v1/events?kind=event.teleport', headers);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().errors[0].pointer).toBe('/query/kind');
    expectDocumented(doc, 'GET', '/v1/events', unknown);
    for (const query of ['kind=nothing.*', `from=${at(50)}&to=${at(20)}`, 'severity=urgent', 'limit=201', 'colour=red']) {
      const refused = await get(`/v1/events?${query}`, headers);
      expect(refused.statusCode, query).toBe(400);
      expectDocumented(doc, 'GET', '/v1/events', refused);
    }
  });

  it('pages with a keyset cursor: nothing skipped or repeated while events arrive, and the cursor is tied to its filters', async () => {
    const { customerId, headers, t } = await morning();
    const all = (await get('/v1/events', headers)).json() as Page;
    const seen: string[] = [];
    let cursor: string | null = null;
    let first = true;
    do {
      const res = await get(`/v1/events?limit=2${cursor ? `&cursor=${cursor}` : ''}`, headers);
      expect(res.statusCode).toBe(200);
      expectDocumented(doc, 'GET', '/v1/events', res);
      const body = res.json() as Page;
      seen.push(...body.data.map((e) => e.id));
      cursor = body.pagination.next_cursor;
      if (first) {
        await t.alarm(-100, 'event.sos'); // older than everything: belongs after the cursor, must show up once
        await t.alarm(1000, 'event.ignition_on'); // newer than the first page: before the cursor, not in this walk
        await waitForEvents(customerId, 8);
        first = false;
      }
    } while (cursor);
    const walked = (await get('/v1/events?limit=200', headers)).json() as Page;
    const newest = walked.data[0]!;
    expect(newest.kind).toBe('event.ignition_on');
    expect(seen).toEqual([...all.data.map((e) => e.id), walked.data[7]!.id]);
    expect(walked.data[7]).toMatchObject({ kind: 'event.sos', occurred_at: at(-100) });

    const next = ((await get('/v1/events?limit=2&kind=event.*', headers)).json() as Page).pagination.next_cursor!;
    expect(next).toEqual(expect.any(String));
    const mismatch = await get(`/v1/events?limit=2&cursor=${next}`, headers);
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json().code).toBe('cursor_mismatch');
    expectDocumented(doc, 'GET', '/v1/events', mismatch);
    const asc = ((await get('/v1/events?limit=3&order=asc', headers)).json() as Page);
    expect(asc.data.map((e) => e.occurred_at)).toEqual([at(-100), at(1), at(20)]);
  });
});

describe('GET /v1/events/{id}', () => {
  it('adds the context (why) and the media, and hides other customers\' events', async () => {
    const { headers } = await morning();
    const list = (await get('/v1/events', headers)).json() as Page;
    const brake = list.data.find((e) => e.kind === 'event.harsh_brake')!;
    const res = await get(`/v1/events/${brake.id}`, headers);
    expect(res.statusCode).toBe(200);
    expectDocumented(doc, 'GET', '/v1/events/{id}', res);
    const detail = res.json();
    expect(detail).toMatchObject({ ...brake, media: [] });
    expect(detail.context).toMatchObject({
      rule: 'speed_change', speed_before_kmh: 60, speed_after_kmh: 25, threshold_kmh_per_s: -11, started_at: at(1), ended_at: at(4),
    });
    const collisionRes = await get(`/v1/events/${list.data[1]!.id}`, headers);
    expectDocumented(doc, 'GET', '/v1/events/{id}', collisionRes);
    const collision = collisionRes.json();
    expect(collision.context).toMatchObject({ rule: 'device_alarm', protocol: 'jt808', device_level: 2, raw: { alarm_id: 77, item: '0x64' } });

    expect((await get('/v1/events/evt_00000000000000000000000000', headers)).statusCode).toBe(404);
    const other = await h.newCustomer('Other Fleet');
    const foreign = await get(`/v1/events/${brake.id}`, { authorization: `Bearer ${other.apiKey}` });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('not_found');
    expectDocumented(doc, 'GET', '/v1/events/{id}', foreign);
    const tooLong = await get(`/v1/events/evt_${'0'.repeat(61)}`, headers);
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().errors[0].pointer).toBe('/params/id');
    expectDocumented(doc, 'GET', '/v1/events/{id}', tooLong);
    const beyondRouting = await get(`/v1/events/evt_${'0'.repeat(97)}`, headers);
    expect(beyondRouting.statusCode).toBe(414);
    expectDocumented(doc, 'GET', '/v1/events/{id}', beyondRouting);
  });
});

describe('access', () => {
  it('needs a key (401), the events:read scope (403, naming it), and shows a customer only its own events', async () => {
    const { customerId, headers } = await morning();
    for (const url of ['/v1/events', '/v1/feed', '/v1/events/evt_x']) {
      const anonymous = await h.app.inject({ method: 'GET', url });
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer/);
      expectDocumented(doc, 'GET', url.replace('evt_x', '{id}'), anonymous);
    }
    const positionsOnly = await h.newKey(customerId, ['positions:read']);
    const refused = await get('/v1/events', { authorization: `Bearer ${positionsOnly}` });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().detail).toContain('events:read');
    expectDocumented(doc, 'GET', '/v1/events', refused);
    expect((await get('/v1/feed', { authorization: `Bearer ${positionsOnly}` })).statusCode).toBe(403);
    const reader = await h.newKey(customerId, ['events:read']);
    expect(((await get('/v1/events', { authorization: `Bearer ${reader}` })).json() as Page).data).toHaveLength(6);

    const other = await h.newCustomer('Other Fleet');
    const otherHeaders = { authorization: `Bearer ${other.apiKey}` };
    expect(((await get('/v1/events', otherHeaders)).json() as Page).data).toEqual([]);
    expect(((await get('/v1/feed', otherHeaders)).json() as Page).data).toEqual([]);
    expect(((await get('/v1/events?kind=alarm.*', headers)).json() as Page).data).toHaveLength(2);
  });
});

describe('GET /v1/feed', () => {
  it('gives every event in commit order with an increasing sequence, and a cursor to come back with', async () => {
    const { customerId, headers, t } = await morning();
    const logOrder = (await h.store.readAll())
      .filter((e): e is typeof e & DeviceEventRaised => e.type === 'DeviceEventRaised')
      .filter((e) => e.data.customer_id === customerId)
      .map((e) => e.data.event_id);
    const firstRes = await get('/v1/feed?limit=4', headers);
    expectDocumented(doc, 'GET', '/v1/feed', firstRes);
    const first = firstRes.json() as Page;
    expect(first.pagination.has_more).toBe(true);
    const secondRes = await get(`/v1/feed?limit=4&cursor=${first.pagination.next_cursor}`, headers);
    expectDocumented(doc, 'GET', '/v1/feed', secondRes);
    const second = secondRes.json() as Page;
    expect(second.pagination.has_more).toBe(false);
    const items = [...first.data, ...second.data];
    expect(items.map((e) => e.id)).toEqual(logOrder);
    expect(logOrder).toHaveLength(6);
    const sequences = items.map((e) => e.sequence!);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(6);
    expect(items[0]).toHaveProperty('severity');

    // Caught up: the cursor still points at the end; the next event shows up on the next poll, and only it.
    const caughtUp = second.pagination.next_cursor!;
    expect(caughtUp).not.toBeNull();
    expect(((await get(`/v1/feed?cursor=${caughtUp}`, headers)).json() as Page).data).toEqual([]);
    await t.alarm(200, 'event.ignition_off');
    await waitForEvents(customerId, 7);
    const pollRes = await get(`/v1/feed?cursor=${caughtUp}`, headers);
    expectDocumented(doc, 'GET', '/v1/feed', pollRes);
    const poll = pollRes.json() as Page;
    expect(poll.data.map((e) => [e.kind, e.sequence! > sequences[5]!])).toEqual([['event.ignition_off', true]]);
    const events = (await get(`/v1/events?limit=1`, headers)).json() as Page;
    const mismatch = await get(`/v1/feed?cursor=${events.pagination.next_cursor}`, headers);
    expect(mismatch.json().code).toBe('cursor_mismatch');
    expectDocumented(doc, 'GET', '/v1/feed', mismatch);
  });
});

describe('device speed limits', () => {
  it('takes speed_limit_kmh on registration and PATCH, shows it, and falls back to the customer default for overspeed', async () => {
    const created = await createCustomer(h.store, h.clock, { name: 'Careful Co', plan: 'pro', speed_limit_kmh: 80 });
    const headers = { authorization: `Bearer ${created.api_key}` };
    const device = await van(created.api_key, '86123456789012');
    expect(device.speed_limit_kmh).toBeNull();
    const t = telemetry(device.id, created.customer_id);
    await t.fix(0, 70);
    await t.fix(5, 85);
    await t.fix(30, 60);
    await waitForEvents(created.customer_id, 1);
    const [overspeed] = ((await get('/v1/events', headers)).json() as Page).data;
    expect(overspeed).toMatchObject({ kind: 'event.overspeed', limit_kmh: 80, delta_kmh: 5 });

    const patch = (payload: unknown) =>
      h.app.inject({ method: 'PATCH', url: `/v1/devices/${device.id}`, headers, payload: payload as Record<string, unknown> });
    const set = await patch({ speed_limit_kmh: 100, name: 'Van 9' });
    expect(set.statusCode).toBe(200);
    expectDocumented(doc, 'PATCH', '/v1/devices/{id}', set);
    expect(set.json()).toMatchObject({ speed_limit_kmh: 100, name: 'Van 9' });
    expect((await get(`/v1/devices/${device.id}`, headers)).json().speed_limit_kmh).toBe(100);
    expect((await patch({ speed_limit_kmh: null })).json()).toMatchObject({ speed_limit_kmh: null, name: 'Van 9' });
    const tooFast = await patch({ speed_limit_kmh: 301 });
    expect(tooFast.statusCode).toBe(400);
    expect(tooFast.json().errors[0].pointer).toBe('/body/speed_limit_kmh');
    expectDocumented(doc, 'PATCH', '/v1/devices/{id}', tooFast);
    expect((await patch({ imei: '123' })).statusCode).toBe(400);
    const other = await h.newCustomer('Other Fleet');
    const foreign = await h.app.inject({
      method: 'PATCH', url: `/v1/devices/${device.id}`, headers: { authorization: `Bearer ${other.apiKey}` }, payload: { name: 'Mine' },
    });
    expect(foreign.statusCode).toBe(404);
    expectDocumented(doc, 'PATCH', '/v1/devices/{id}', foreign);
  });
});
