/**
 * Bad input on every route that takes some: a 400 problem+json whose errors
 * point at exactly the offending parts (/body, /query, /params, /headers).
 * Every list refuses limits outside 1..max and cursors it did not issue, and
 * a cursor of one filter set is refused under another. The routes that take
 * input are read from the OpenAPI document, so a new one fails this file
 * until it has a case here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { loadOpenApi } from '../support/openapi.js';
import { raiseSos, recordPosition } from '../support/store-events.js';

/** Input routes that answer bad input in another documented shape (RFC 6749 §5.2), tested in oauth.test.ts. */
const NOT_PROBLEM_JSON = ['POST /v1/oauth/token'];

interface Fixture {
  deviceId: string;
  otherDeviceId: string;
  driverId: string;
  webhookId: string;
  geofenceId: string;
  from: string;
}

interface Case {
  /** "METHOD /path/:param", as Fastify names the route. */
  route: string;
  url: (f: Fixture) => string;
  payload?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Every pointer of the answer's errors, and no other. */
  pointers: string[];
}

const LONG_ID = 'x'.repeat(65);
const methodOf = (route: string) => route.split(' ')[0]!;
const pathOf = (route: string) => route.split(' ')[1]!;
const withQuery = (url: string, query: string) => `${url}${url.includes('?') ? '&' : '?'}${query}`;

/** Every paginated list, with the largest limit it allows (docs/api-decisions.md, Pagination). */
const LISTS: Array<{ route: string; url: (f: Fixture) => string; max: number }> = [
  { route: 'GET /v1/devices', url: () => '/v1/devices', max: 200 },
  { route: 'GET /v1/positions/latest', url: () => '/v1/positions/latest', max: 1000 },
  { route: 'GET /v1/positions', url: (f) => `/v1/positions?device_id=${f.deviceId}&from=${f.from}`, max: 1000 },
  { route: 'GET /v1/events', url: () => '/v1/events', max: 200 },
  { route: 'GET /v1/feed', url: () => '/v1/feed', max: 200 },
  { route: 'GET /v1/geofences', url: () => '/v1/geofences', max: 200 },
  { route: 'GET /v1/drivers', url: () => '/v1/drivers', max: 200 },
  { route: 'GET /v1/webhooks', url: () => '/v1/webhooks', max: 200 },
  { route: 'GET /v1/webhooks/:id/deliveries', url: (f) => `/v1/webhooks/${f.webhookId}/deliveries`, max: 200 },
  { route: 'GET /v1/api-keys', url: () => '/v1/api-keys', max: 200 },
  { route: 'GET /v1/oauth/clients', url: () => '/v1/oauth/clients', max: 200 },
  { route: 'GET /v1/devices/:id/commands', url: (f) => `/v1/devices/${f.deviceId}/commands`, max: 200 },
  { route: 'GET /v1/trips', url: () => '/v1/trips', max: 1000 },
  { route: 'GET /v1/stops', url: () => '/v1/stops', max: 1000 },
  { route: 'GET /v1/idling', url: () => '/v1/idling', max: 1000 },
];

/** Cursors no list issued: not base64url at all, and base64url of text without a filter hash. */
const FORGED_CURSORS = ['not*a*cursor', Buffer.from('garbage').toString('base64url')];

/** Every route with a path parameter; ids are at most 64 characters. */
const ID_ROUTES = [
  'GET /v1/devices/:id',
  'PATCH /v1/devices/:id',
  'GET /v1/events/:id',
  'GET /v1/geofences/:id',
  'PATCH /v1/geofences/:id',
  'DELETE /v1/geofences/:id',
  'GET /v1/drivers/:id',
  'GET /v1/drivers/:id/score',
  'GET /v1/webhooks/:id',
  'PATCH /v1/webhooks/:id',
  'DELETE /v1/webhooks/:id',
  'POST /v1/webhooks/:id/rotate-secret',
  'GET /v1/webhooks/:id/deliveries/:delivery_id',
  'POST /v1/webhooks/:id/deliveries/:delivery_id/redeliver',
  'GET /v1/webhooks/:id/replays/:replay_id',
  'POST /v1/webhooks/:id/test',
  'DELETE /v1/api-keys/:id',
  'DELETE /v1/oauth/clients/:client_id',
  'POST /v1/devices/:id/commands',
  'GET /v1/devices/:id/commands',
  'GET /v1/devices/:id/command-types',
  'GET /v1/commands/:id',
  'DELETE /v1/commands/:id',
  'GET /v1/devices/:id/accumulators',
  'PUT /v1/devices/:id/accumulators',
];
const idParam = (route: string) => /:([a-z_]+)/.exec(route)![1]!;
const withId = (route: string, id: string) => pathOf(route).replace(/:[a-z_]+/, id);
/** A valid body for the routes that take one, so only the parameter is wrong. */
const ID_PAYLOADS: Record<string, Record<string, unknown>> = {
  'PATCH /v1/devices/:id': { name: 'Van 2' },
  'PATCH /v1/webhooks/:id': { description: 'Dispatch' },
  'PATCH /v1/geofences/:id': { dwell_s: 600 },
  'POST /v1/webhooks/:id/test': {},
  'POST /v1/devices/:id/commands': { type: 'reboot' },
  'PUT /v1/devices/:id/accumulators': { odometer_km: 10 },
};
const idPayload = (route: string) => ID_PAYLOADS[route];

const fieldCases: Case[] = [
  { route: 'POST /v1/devices', url: () => '/v1/devices', payload: {}, pointers: ['/body/imei', '/body/model'] },
  { route: 'POST /v1/devices', url: () => '/v1/devices', payload: { imei: '35693803564380X', model: 'FMB920', colour: 'red' }, pointers: ['/body/colour', '/body/imei'] },
  { route: 'PATCH /v1/devices/:id', url: (f) => `/v1/devices/${f.deviceId}`, payload: { name: 'n'.repeat(129), speed_limit_kmh: 301 }, pointers: ['/body/name', '/body/speed_limit_kmh'] },
  // JSON bodies are not coerced: an invalid value on a nullable field is refused, not turned into null, and "60" is not 60.
  { route: 'PATCH /v1/devices/:id', url: (f) => `/v1/devices/${f.deviceId}`, payload: { name: '', speed_limit_kmh: 0, group_id: '' }, pointers: ['/body/group_id', '/body/name', '/body/speed_limit_kmh'] },
  { route: 'PATCH /v1/devices/:id', url: (f) => `/v1/devices/${f.deviceId}`, payload: { speed_limit_kmh: '60', driver_id: false }, pointers: ['/body/driver_id', '/body/speed_limit_kmh'] },
  { route: 'POST /v1/devices', url: () => '/v1/devices', payload: { imei: '356938035643809', model: 'FMB920', group_id: '' }, pointers: ['/body/group_id'] },
  { route: 'POST /v1/drivers', url: () => '/v1/drivers', payload: { name: 'Ilze', external_id: '' }, pointers: ['/body/external_id'] },
  { route: 'GET /v1/devices', url: () => '/v1/devices?status=bogus', pointers: ['/query/status'] },
  { route: 'GET /v1/devices', url: () => '/v1/devices?colour=red', pointers: ['/query/colour'] },
  { route: 'GET /v1/positions/latest', url: () => `/v1/positions/latest?group_id=${'g'.repeat(65)}`, pointers: ['/query/group_id'] },
  { route: 'GET /v1/positions', url: () => '/v1/positions', pointers: ['/query/device_id', '/query/from'] },
  { route: 'GET /v1/positions', url: (f) => `/v1/positions?device_id=${f.deviceId}&from=2026-11-22T10:00:00`, pointers: ['/query/from'] },
  { route: 'GET /v1/positions', url: (f) => `/v1/positions?device_id=${f.deviceId}&from=${f.from}&order=sideways`, pointers: ['/query/order'] },
  { route: 'GET /v1/events', url: () => '/v1/events?severity=urgent', pointers: ['/query/severity'] },
  { route: 'GET /v1/events', url: () => '/v1/events?kind=event.teleport', pointers: ['/query/kind'] },
  { route: 'POST /v1/geofences', url: () => '/v1/geofences', payload: { name: '', center: { lat: 56.9, lng: 24.1 }, radius_m: 5 }, pointers: ['/body/name', '/body/radius_m'] },
  { route: 'POST /v1/geofences', url: () => '/v1/geofences', payload: { name: 'Yard' }, pointers: ['/body/geometry'] },
  { route: 'POST /v1/geofences', url: () => '/v1/geofences', payload: { name: 'Yard', center: { lat: 56.9, lng: 24.1 }, radius_m: 50, dwell_s: 30 }, pointers: ['/body/dwell_s'] },
  { route: 'PATCH /v1/geofences/:id', url: (f) => `/v1/geofences/${f.geofenceId}`, payload: { dwell_s: 604_801, name: 'Gate' }, pointers: ['/body/dwell_s', '/body/name'] },
  { route: 'PATCH /v1/geofences/:id', url: (f) => `/v1/geofences/${f.geofenceId}`, payload: { dwell_s: '600' }, pointers: ['/body/dwell_s'] },
  { route: 'POST /v1/drivers', url: () => '/v1/drivers', payload: { name: '   ' }, pointers: ['/body/name'] },
  { route: 'GET /v1/drivers/:id/score', url: (f) => `/v1/drivers/${f.driverId}/score?from=2026-02-30`, pointers: ['/query/from'] },
  { route: 'GET /v1/drivers/:id/score', url: (f) => `/v1/drivers/${f.driverId}/score?to=tomorrow`, pointers: ['/query/to'] },
  { route: 'POST /v1/api-keys', url: () => '/v1/api-keys', payload: { name: '', scopes: [] }, pointers: ['/body/name', '/body/scopes'] },
  { route: 'POST /v1/api-keys', url: () => '/v1/api-keys', payload: { name: 'Ops', scopes: ['root'] }, pointers: ['/body/scopes/0'] },
  { route: 'POST /v1/oauth/clients', url: () => '/v1/oauth/clients', payload: { name: '', scopes: [] }, pointers: ['/body/name', '/body/scopes'] },
  { route: 'POST /v1/webhooks', url: () => '/v1/webhooks', payload: { enabled: 'yes' }, pointers: ['/body/enabled', '/body/events', '/body/url'] },
  { route: 'POST /v1/webhooks', url: () => '/v1/webhooks', payload: { url: 'https://hooks.example.com/x', events: ['geofence.*', 'geofence.leave'] }, pointers: ['/body/events/1'] },
  { route: 'PATCH /v1/webhooks/:id', url: (f) => `/v1/webhooks/${f.webhookId}`, payload: { events: [], device_ids: [], secret: 'whsec_x' }, pointers: ['/body/device_ids', '/body/events', '/body/secret'] },
  { route: 'PATCH /v1/webhooks/:id', url: (f) => `/v1/webhooks/${f.webhookId}`, payload: { url: 'ftp://hooks.example.com/x' }, pointers: ['/body/url'] },
  { route: 'POST /v1/webhooks/:id/rotate-secret', url: (f) => `/v1/webhooks/${f.webhookId}/rotate-secret`, payload: { grace_period_s: -1 }, pointers: ['/body/grace_period_s'] },
  { route: 'POST /v1/webhooks/:id/replay', url: (f) => `/v1/webhooks/${f.webhookId}/replay`, payload: { from: '2026-11-22T10:00:00', to: 'tomorrow', colour: 1 }, pointers: ['/body/colour', '/body/from', '/body/to'] },
  { route: 'POST /v1/webhooks/:id/test', url: (f) => `/v1/webhooks/${f.webhookId}/test`, payload: { event: 'event.teleport' }, pointers: ['/body/event'] },
  { route: 'GET /v1/webhooks/:id/deliveries', url: (f) => `/v1/webhooks/${f.webhookId}/deliveries?state=failed,lost`, pointers: ['/query/state'] },
  { route: 'GET /v1/webhooks/:id/deliveries', url: (f) => `/v1/webhooks/${f.webhookId}/deliveries?event=device.*,devices.*`, pointers: ['/query/event'] },
  { route: 'GET /v1/stream', url: () => '/v1/stream', headers: { 'last-event-id': 'yesterday' }, pointers: ['/headers/last-event-id'] },
  { route: 'POST /v1/devices/:id/commands', url: (f) => `/v1/devices/${f.deviceId}/commands`, payload: { type: 'reboot', ttl_s: 0, colour: 1 }, pointers: ['/body/colour', '/body/ttl_s'] },
  { route: 'POST /v1/devices/:id/commands', url: (f) => `/v1/devices/${f.deviceId}/commands`, payload: { type: 'set_report_interval', params: { interval_s: 4 } }, pointers: ['/body/params/interval_s'] },
  {
    route: 'POST /v1/devices/:id/commands', url: (f) => `/v1/devices/${f.deviceId}/commands`, payload: { type: 'reboot' }, headers: { 'idempotency-key': 'k'.repeat(256) },
    pointers: ['/headers/idempotency-key'],
  },
  { route: 'GET /v1/devices/:id/commands', url: (f) => `/v1/devices/${f.deviceId}/commands?status=lost`, pointers: ['/query/status'] },
  { route: 'GET /v1/trips', url: () => '/v1/trips?format=xls&colour=1', pointers: ['/query/colour', '/query/format'] },
  { route: 'GET /v1/stops', url: () => '/v1/stops?from=yesterday', pointers: ['/query/from'] },
  { route: 'GET /v1/idling', url: () => '/v1/idling?limit=1001', pointers: ['/query/limit'] },
  { route: 'PUT /v1/devices/:id/accumulators', url: (f) => `/v1/devices/${f.deviceId}/accumulators`, payload: { odometer_km: -1, colour: 1 }, pointers: ['/body/colour', '/body/odometer_km'] },
  { route: 'PUT /v1/settings/trips', url: () => '/v1/settings/trips', payload: { trip_source: 'ignition', colour: 1 }, pointers: ['/body/colour', '/body/trip_source'] },
  { route: 'POST /v1/sessions', url: () => '/v1/sessions', payload: { email: '', password: 'p'.repeat(1025), remember: true }, pointers: ['/body/email', '/body/password', '/body/remember'] },
];

let h: ApiHarness;
let fixture: Fixture;
let auth: Record<string, string>;

async function send(method: string, url: string, payload?: Record<string, unknown>, headers: Record<string, string> = {}) {
  return h.app.inject({ method: method as 'GET', url, headers: { ...auth, ...headers }, ...(payload ? { payload } : {}) });
}

/** Asserts a 400 problem+json carrying `code` and exactly `pointers`. */
function expectProblem(res: Awaited<ReturnType<typeof send>>, pointers: string[], code = 'validation_failed'): void {
  expect(res.statusCode, res.body).toBe(400);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json() as { status: number; code: string; detail: string; errors: Array<{ pointer: string; message: string }> };
  expect(body).toMatchObject({ status: 400, code });
  expect(body.detail.length).toBeGreaterThan(0);
  expect([...new Set(body.errors.map((e) => e.pointer))].sort()).toEqual([...pointers].sort());
  for (const e of body.errors) expect(e.message.length).toBeGreaterThan(0);
}

beforeAll(async () => {
  h = await startApiHarness();
  const customer = await h.newCustomer('Validation Freight');
  auth = { authorization: `Bearer ${customer.apiKey}` };
  const create = async (url: string, payload: Record<string, unknown>) => {
    const res = await send('POST', url, payload);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  const deviceId = await create('/v1/devices', { imei: imeiFrom('35693803564380'), model: 'FMB920', group_id: 'north' });
  const otherDeviceId = await create('/v1/devices', { imei: imeiFrom('35693803564381'), model: 'FMB920', group_id: 'north' });
  const t = h.clock.now() - 600_000;
  for (const [i, id] of [deviceId, otherDeviceId].entries()) {
    await recordPosition(h, { customerId: customer.customerId, deviceId: id }, t + i);
    await recordPosition(h, { customerId: customer.customerId, deviceId: id }, t + 60_000 + i);
  }
  await raiseSos(h, { customerId: customer.customerId, deviceId }, t);
  await raiseSos(h, { customerId: customer.customerId, deviceId }, t + 60_000);
  // Two rows in every list without filters, so each of them has a second page.
  await create('/v1/drivers', { name: 'Roberts Liepa' });
  const [geofenceId] = [
    await create('/v1/geofences', { name: 'North gate', center: { lat: 56.95, lng: 24.1 }, radius_m: 100 }),
    await create('/v1/geofences', { name: 'South gate', center: { lat: 56.95, lng: 24.1 }, radius_m: 100 }),
  ];
  for (const name of ['Integrator A', 'Integrator B']) expect((await send('POST', '/v1/oauth/clients', { name, scopes: ['devices:read'] })).statusCode).toBe(201);
  await create('/v1/api-keys', { name: 'Second key', scopes: ['devices:read'] });
  for (const type of ['reboot', 'position_request']) expect((await send('POST', `/v1/devices/${deviceId}/commands`, { type })).statusCode).toBe(202);
  // Closed local ports: deliveries fail at once, without the network.
  const webhookId = await create('/v1/webhooks', { url: 'http://127.0.0.1:9/a', events: ['*'] });
  await create('/v1/webhooks', { url: 'http://127.0.0.1:9/b', events: ['alarm.*'] });
  fixture = {
    deviceId,
    otherDeviceId,
    driverId: await create('/v1/drivers', { name: 'Ilze Kalna' }),
    webhookId,
    geofenceId: geofenceId!,
    from: new Date(t - 3_600_000).toISOString(),
  };
});

afterAll(async () => {
  await h.close();
});


it('has a case for every documented route that takes input', async () => {
  const doc = await loadOpenApi(h.app);
  const withInput: string[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item as Record<string, { parameters?: unknown[]; requestBody?: unknown }>)) {
      if ((op.parameters?.length ?? 0) > 0 || op.requestBody) withInput.push(`${method.toUpperCase()} ${template.replace(/\{([a-z_]+)\}/g, ':$1')}`);
    }
  }
  expect(withInput).toEqual(expect.arrayContaining(NOT_PROBLEM_JSON));
  const covered = new Set([...fieldCases.map((c) => c.route), ...LISTS.map((l) => l.route), ...ID_ROUTES]);
  expect(withInput.filter((r) => !NOT_PROBLEM_JSON.includes(r) && !covered.has(r))).toEqual([]);
});

describe('bad fields', () => {
  it.each(fieldCases.map((c) => [`${c.route} ${c.pointers.join(' ')}`, c] as const))('%s', async (_name, c) => {
    expectProblem(await send(methodOf(c.route), c.url(fixture), c.payload, c.headers), c.pointers);
  });
});

describe('limit outside 1..max', () => {
  it.each(LISTS.map((l) => [l.route, l] as const))('%s', async (_name, { route, url, max }) => {
    for (const limit of ['0', String(max + 1), 'ten']) {
      expectProblem(await send('GET', withQuery(url(fixture), `limit=${limit}`)), ['/query/limit']);
    }
    const largest = await send('GET', withQuery(url(fixture), `limit=${max}`));
    expect(largest.statusCode, `${route} limit=${max}: ${largest.body}`).toBe(200);
  });
});

describe('cursors no list issued', () => {
  it.each(LISTS.map((l) => [l.route, l] as const))('%s: 400 invalid_cursor', async (_name, { url }) => {
    for (const cursor of FORGED_CURSORS) {
      expectProblem(await send('GET', withQuery(url(fixture), `cursor=${encodeURIComponent(cursor)}`)), ['/query/cursor'], 'invalid_cursor');
    }
  });
});

describe('ids over 64 characters', () => {
  it.each(ID_ROUTES.map((r) => [r] as const))('%s: 400 at the parameter; 64 characters are a plain 404', async (route) => {
    expectProblem(await send(methodOf(route), withId(route, LONG_ID), idPayload(route)), [`/params/${idParam(route)}`]);
    const longest = await send(methodOf(route), withId(route, 'x'.repeat(64)), idPayload(route));
    expect(longest.statusCode).toBe(404);
    expect(longest.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});

describe('a cursor reused with other filters', () => {
  /** A first page under `issuedBy` (which must have more), its cursor then sent with `reusedWith`. */
  const MISMATCHES: Array<{ name: string; issuedBy: (f: Fixture) => string; reusedWith: (f: Fixture) => string }> = [
    { name: 'devices: group_id dropped', issuedBy: () => '/v1/devices?limit=1&group_id=north', reusedWith: () => '/v1/devices?limit=1' },
    {
      name: 'latest positions: device_id dropped',
      issuedBy: (f) => `/v1/positions/latest?limit=1&device_id=${f.deviceId},${f.otherDeviceId}`,
      reusedWith: () => '/v1/positions/latest?limit=1',
    },
    {
      name: 'position history: order reversed',
      issuedBy: (f) => `/v1/positions?device_id=${f.deviceId}&from=${f.from}&limit=1`,
      reusedWith: (f) => `/v1/positions?device_id=${f.deviceId}&from=${f.from}&limit=1&order=desc`,
    },
    { name: 'events: kind dropped', issuedBy: () => '/v1/events?limit=1&kind=event.sos', reusedWith: () => '/v1/events?limit=1' },
    { name: 'feed: a cursor of the events list', issuedBy: () => '/v1/events?limit=1', reusedWith: () => '/v1/feed?limit=1' },
    { name: 'events: a cursor of the feed', issuedBy: () => '/v1/feed?limit=1', reusedWith: () => '/v1/events?limit=1' },
    // Lists without filters still tell their cursors apart: each list's name is in the hash.
    { name: 'drivers: a cursor of the geofences list', issuedBy: () => '/v1/geofences?limit=1', reusedWith: () => '/v1/drivers?limit=1' },
    { name: 'api keys: a cursor of the OAuth clients list', issuedBy: () => '/v1/oauth/clients?limit=1', reusedWith: () => '/v1/api-keys?limit=1' },
    { name: 'devices: a cursor of the drivers list', issuedBy: () => '/v1/drivers?limit=1', reusedWith: () => '/v1/devices?limit=1' },
    {
      name: "commands: another device's list",
      issuedBy: (f) => `/v1/devices/${f.deviceId}/commands?limit=1`,
      reusedWith: (f) => `/v1/devices/${f.otherDeviceId}/commands?limit=1`,
    },
  ];

  it.each(MISMATCHES.map((m) => [m.name, m] as const))('%s: 400 cursor_mismatch', async (_name, m) => {
    const first = await send('GET', m.issuedBy(fixture));
    expect(first.statusCode, first.body).toBe(200);
    const { next_cursor: cursor, has_more: hasMore } = (first.json() as { pagination: { next_cursor: string; has_more: boolean } }).pagination;
    expect(hasMore).toBe(true);
    const again = await send('GET', withQuery(m.issuedBy(fixture), `cursor=${cursor}`));
    expect(again.statusCode, 'the cursor works with its own filters').toBe(200);
    expectProblem(await send('GET', withQuery(m.reusedWith(fixture), `cursor=${cursor}`)), ['/query/cursor'], 'cursor_mismatch');
  });
});
