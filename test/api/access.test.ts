/**
 * Authentication and scopes on every route of the app, from one table: no
 * credential and a bad one get 401, a credential without the route's scope
 * gets 403 naming it, one with the scope (or, for reads, the matching write
 * scope) gets through. The route list is read from the app itself, so a new
 * route fails this file until it has a row here or is named public.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, type Scope } from '../../core/events.js';
import { imeiFrom } from '../../core/imei.js';
import { until } from '../support/device-login.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { loadOpenApi } from '../support/openapi.js';
import { openSse } from '../support/sse-client.js';
import { raiseSos, recordPosition } from '../support/store-events.js';

/** Routes that take no credential. /docs/* is the documentation UI. */
const PUBLIC_ROUTES = ['GET /healthz', 'GET /readyz', 'GET /metrics', 'GET /v1/openapi.json', 'GET /v1/postman.json', 'POST /v1/oauth/token', 'POST /v1/sessions', 'GET /panel-config.json'];
const PUBLIC_PREFIX = '/docs';
/**
 * Routes outside this table, tested in files of their own: the panel's files
 * (`/`, and `/assets/*`, which printRoutes shows as `/*` under the root;
 * panel.test.ts) and the current session, which only the cookie reaches
 * (sessions.test.ts).
 */
const OWN_TESTS = ['GET /', 'GET /*', 'GET /v1/sessions/current', 'DELETE /v1/sessions/current'];

interface Fixture {
  deviceId: string;
  driverId: string;
  geofenceId: string;
  webhookId: string;
  /** A delivery of the webhook (the SOS raised after it was created). */
  deliveryId: string;
  /** A replay of the webhook. */
  replayId: string;
  eventId: string;
  from: string;
  /** A queued command of the device. */
  commandId: string;
  /** Queues another command of the device (for the DELETE row). */
  queueCommand(): Promise<string>;
  /** Creates a row through the API with the tenant's full-access key and returns its id (for the DELETE rows). */
  create(url: string, payload: Record<string, unknown>, idField?: string): Promise<string>;
  nextImei(): string;
}

interface RouteCase {
  /** Any one of them lets the request through. */
  scopes: Scope[];
  /** The status of a request that gets through. */
  ok: number;
  request(f: Fixture): Promise<{ url: string; payload?: Record<string, unknown> }> | { url: string; payload?: Record<string, unknown> };
  /** Server-sent events: a request that gets through is checked over HTTP, as inject would wait for the end forever. */
  streaming?: boolean;
}

const circle = { name: 'Yard', center: { lat: 56.95, lng: 24.1 }, radius_m: 300 };
// A closed local port: deliveries fail at once, without the network.
const hook = { url: 'http://127.0.0.1:9/fleet', events: ['*'] };

const ROUTES: Record<string, RouteCase> = {
  'POST /v1/devices': { scopes: ['devices:write'], ok: 201, request: (f) => ({ url: '/v1/devices', payload: { imei: f.nextImei(), model: 'FMB920' } }) },
  'GET /v1/devices': { scopes: ['devices:read'], ok: 200, request: () => ({ url: '/v1/devices' }) },
  'GET /v1/devices/:id': { scopes: ['devices:read'], ok: 200, request: (f) => ({ url: `/v1/devices/${f.deviceId}` }) },
  'PATCH /v1/devices/:id': { scopes: ['devices:write'], ok: 200, request: (f) => ({ url: `/v1/devices/${f.deviceId}`, payload: { name: 'Van 9' } }) },
  'POST /v1/devices/:id/commands': { scopes: ['commands:write'], ok: 202, request: (f) => ({ url: `/v1/devices/${f.deviceId}/commands`, payload: { type: 'reboot' } }) },
  'GET /v1/devices/:id/commands': { scopes: ['commands:read'], ok: 200, request: (f) => ({ url: `/v1/devices/${f.deviceId}/commands` }) },
  'GET /v1/trips': { scopes: ['positions:read'], ok: 200, request: () => ({ url: '/v1/trips' }) },
  'GET /v1/stops': { scopes: ['positions:read'], ok: 200, request: () => ({ url: '/v1/stops' }) },
  'GET /v1/idling': { scopes: ['positions:read'], ok: 200, request: () => ({ url: '/v1/idling' }) },
  'GET /v1/devices/:id/accumulators': { scopes: ['devices:read'], ok: 200, request: (f) => ({ url: `/v1/devices/${f.deviceId}/accumulators` }) },
  'PUT /v1/devices/:id/accumulators': { scopes: ['devices:write'], ok: 200, request: (f) => ({ method: 'PUT', url: `/v1/devices/${f.deviceId}/accumulators`, payload: { odometer_km: 1000 } }) },
  'GET /v1/settings/trips': { scopes: ['devices:read'], ok: 200, request: () => ({ url: '/v1/settings/trips' }) },
  'PUT /v1/settings/trips': { scopes: ['devices:write'], ok: 200, request: () => ({ method: 'PUT', url: '/v1/settings/trips', payload: { min_trip_duration_s: 120 } }) },
  'GET /v1/devices/:id/command-types': { scopes: ['commands:read'], ok: 200, request: (f) => ({ url: `/v1/devices/${f.deviceId}/command-types` }) },
  'GET /v1/commands/:id': { scopes: ['commands:read'], ok: 200, request: (f) => ({ url: `/v1/commands/${f.commandId}` }) },
  'DELETE /v1/commands/:id': { scopes: ['commands:write'], ok: 200, request: async (f) => ({ url: `/v1/commands/${await f.queueCommand()}` }) },
  'GET /v1/positions/latest': { scopes: ['positions:read'], ok: 200, request: () => ({ url: '/v1/positions/latest' }) },
  'GET /v1/positions': { scopes: ['positions:read'], ok: 200, request: (f) => ({ url: `/v1/positions?device_id=${f.deviceId}&from=${f.from}` }) },
  'GET /v1/events': { scopes: ['events:read'], ok: 200, request: () => ({ url: '/v1/events' }) },
  'GET /v1/events/:id': { scopes: ['events:read'], ok: 200, request: (f) => ({ url: `/v1/events/${f.eventId}` }) },
  'GET /v1/feed': { scopes: ['events:read'], ok: 200, request: () => ({ url: '/v1/feed' }) },
  'POST /v1/geofences': { scopes: ['geofences:write'], ok: 201, request: () => ({ url: '/v1/geofences', payload: circle }) },
  'GET /v1/geofences': { scopes: ['geofences:read'], ok: 200, request: () => ({ url: '/v1/geofences' }) },
  'GET /v1/geofences/:id': { scopes: ['geofences:read'], ok: 200, request: (f) => ({ url: `/v1/geofences/${f.geofenceId}` }) },
  'PATCH /v1/geofences/:id': {
    scopes: ['geofences:write'], ok: 200, request: (f) => ({ url: `/v1/geofences/${f.geofenceId}`, payload: { dwell_s: 900 } }),
  },
  'DELETE /v1/geofences/:id': {
    scopes: ['geofences:write'], ok: 204, request: async (f) => ({ url: `/v1/geofences/${await f.create('/v1/geofences', circle)}` }),
  },
  'POST /v1/webhooks': { scopes: ['webhooks:write'], ok: 201, request: () => ({ url: '/v1/webhooks', payload: hook }) },
  'GET /v1/webhooks': { scopes: ['webhooks:read'], ok: 200, request: () => ({ url: '/v1/webhooks' }) },
  'GET /v1/webhooks/:id': { scopes: ['webhooks:read'], ok: 200, request: (f) => ({ url: `/v1/webhooks/${f.webhookId}` }) },
  'PATCH /v1/webhooks/:id': { scopes: ['webhooks:write'], ok: 200, request: (f) => ({ url: `/v1/webhooks/${f.webhookId}`, payload: { description: 'Dispatch' } }) },
  'DELETE /v1/webhooks/:id': { scopes: ['webhooks:write'], ok: 204, request: async (f) => ({ url: `/v1/webhooks/${await f.create('/v1/webhooks', hook)}` }) },
  'GET /v1/webhooks/:id/deliveries': { scopes: ['webhooks:read'], ok: 200, request: (f) => ({ url: `/v1/webhooks/${f.webhookId}/deliveries` }) },
  'GET /v1/webhooks/:id/deliveries/:delivery_id': {
    scopes: ['webhooks:read'], ok: 200, request: (f) => ({ url: `/v1/webhooks/${f.webhookId}/deliveries/${f.deliveryId}` }),
  },
  'POST /v1/webhooks/:id/deliveries/:delivery_id/redeliver': {
    scopes: ['webhooks:write'], ok: 202, request: (f) => ({ url: `/v1/webhooks/${f.webhookId}/deliveries/${f.deliveryId}/redeliver` }),
  },
  'POST /v1/webhooks/:id/replay': {
    scopes: ['webhooks:write'], ok: 202, request: (f) => ({ url: `/v1/webhooks/${f.webhookId}/replay`, payload: { from: f.from, to: new Date(Date.parse(f.from) + 3_600_000).toISOString() } }),
  },
  'GET /v1/webhooks/:id/replays/:replay_id': {
    scopes: ['webhooks:read'], ok: 200, request: (f) => ({ url: `/v1/webhooks/${f.webhookId}/replays/${f.replayId}` }),
  },
  'POST /v1/webhooks/:id/test': { scopes: ['webhooks:write'], ok: 200, request: (f) => ({ url: `/v1/webhooks/${f.webhookId}/test`, payload: {} }) },
  'POST /v1/webhooks/:id/rotate-secret': {
    scopes: ['webhooks:write'], ok: 200, request: (f) => ({ url: `/v1/webhooks/${f.webhookId}/rotate-secret`, payload: { grace_period_s: 60 } }),
  },
  'POST /v1/drivers': { scopes: ['drivers:write'], ok: 201, request: () => ({ url: '/v1/drivers', payload: { name: 'Anna Berzina' } }) },
  'GET /v1/drivers': { scopes: ['drivers:read'], ok: 200, request: () => ({ url: '/v1/drivers' }) },
  'GET /v1/drivers/:id': { scopes: ['drivers:read'], ok: 200, request: (f) => ({ url: `/v1/drivers/${f.driverId}` }) },
  'GET /v1/drivers/:id/score': { scopes: ['drivers:read'], ok: 200, request: (f) => ({ url: `/v1/drivers/${f.driverId}/score` }) },
  'POST /v1/api-keys': {
    scopes: ['api_keys:manage'], ok: 201, request: () => ({ url: '/v1/api-keys', payload: { name: 'Reporting', scopes: ['api_keys:manage'] } }),
  },
  'GET /v1/api-keys': { scopes: ['api_keys:manage'], ok: 200, request: () => ({ url: '/v1/api-keys' }) },
  'DELETE /v1/api-keys/:id': {
    scopes: ['api_keys:manage'],
    ok: 204,
    request: async (f) => ({ url: `/v1/api-keys/${await f.create('/v1/api-keys', { name: 'Old', scopes: ['devices:read'] })}` }),
  },
  'POST /v1/oauth/clients': {
    scopes: ['api_keys:manage'], ok: 201, request: () => ({ url: '/v1/oauth/clients', payload: { name: 'TMS', scopes: ['api_keys:manage'] } }),
  },
  'GET /v1/oauth/clients': { scopes: ['api_keys:manage'], ok: 200, request: () => ({ url: '/v1/oauth/clients' }) },
  'DELETE /v1/oauth/clients/:client_id': {
    scopes: ['api_keys:manage'],
    ok: 204,
    request: async (f) => ({ url: `/v1/oauth/clients/${await f.create('/v1/oauth/clients', { name: 'Old TMS', scopes: ['events:read'] }, 'client_id')}` }),
  },
  'GET /v1/stream': { scopes: ['positions:read', 'events:read', 'commands:read'], ok: 200, streaming: true, request: () => ({ url: '/v1/stream' }) },
};

/** "METHOD /path" of every route in Fastify's route tree, HEAD twins included. */
function servedRoutes(app: FastifyInstance): string[] {
  const routes: string[] = [];
  const paths: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+)(?: \(([^)]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    paths[depth] = (depth > 0 ? paths[depth - 1]! : '') + m[2]!;
    for (const verb of m[3]?.split(', ') ?? []) routes.push(`${verb} ${paths[depth]}`);
  }
  return routes;
}

/** The scopes a 403 names, in its detail or its WWW-Authenticate `scope="…"`. */
const scopesIn = (text: string) => [...new Set(text.match(/\b[a-z_]+:(?:read|write|manage)\b/g) ?? [])].sort();

/** A scope of another resource than any the route needs: it must not open the route. */
function unrelatedScope(needed: Scope[]): Scope {
  const resources = new Set(needed.map((s) => s.split(':')[0]));
  return ALL_SCOPES.find((s) => !resources.has(s.split(':')[0]))!;
}

/** Scopes that must each let the request through: the route's own, and the write scope of a read one. */
function admittingScopes(needed: Scope[]): Scope[] {
  const writes = needed.map((s) => s.replace(/:read$/, ':write') as Scope).filter((s) => ALL_SCOPES.includes(s));
  return [...new Set([...needed, ...writes])];
}

let h: ApiHarness;
let base: string;
let fixture: Fixture;
let customerId: string;
const keys = new Map<string, string>();

/** One key per scope set, made on first use. */
async function keyWith(scopes: Scope[]): Promise<string> {
  const name = [...scopes].sort().join(' ');
  if (!keys.has(name)) keys.set(name, await h.newKey(customerId, scopes));
  return keys.get(name)!;
}

const method = (route: string) => route.split(' ')[0]!;
const path = (route: string) => route.split(' ')[1]!;

async function send(route: string, headers: Record<string, string>, asMethod?: string) {
  const req = await ROUTES[route]!.request(fixture);
  return h.app.inject({ method: (asMethod ?? method(route)) as 'GET', url: req.url, headers, ...(req.payload ? { payload: req.payload } : {}) });
}

beforeAll(async () => {
  h = await startApiHarness();
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const address = h.app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const customer = await h.newCustomer('Access Checks Ltd');
  customerId = customer.customerId;
  const admin = { authorization: `Bearer ${customer.apiKey}` };
  let imeis = 0;
  const create = async (url: string, payload: Record<string, unknown>, idField = 'id') => {
    const res = await h.app.inject({ method: 'POST', url, headers: admin, payload });
    expect(res.statusCode, `${url}: ${res.body}`).toBe(201);
    return res.json()[idField] as string;
  };
  const nextImei = () => imeiFrom(`35693803${String(++imeis).padStart(6, '0')}`);
  const deviceId = await create('/v1/devices', { imei: nextImei(), model: 'FMB920', name: 'Van 1' });
  const t = h.clock.now() - 60_000;
  await recordPosition(h, { customerId, deviceId }, t);
  const queueCommand = async () => {
    const res = await h.app.inject({ method: 'POST', url: `/v1/devices/${deviceId}/commands`, headers: admin, payload: { type: 'reboot' } });
    expect(res.statusCode, res.body).toBe(202);
    return res.json().id as string;
  };
  fixture = {
    deviceId,
    driverId: await create('/v1/drivers', { name: 'Ilze Kalna' }),
    geofenceId: await create('/v1/geofences', circle),
    webhookId: await create('/v1/webhooks', hook),
    eventId: await raiseSos(h, { customerId, deviceId }, t),
    deliveryId: '',
    replayId: '',
    from: new Date(t - 3_600_000).toISOString(),
    commandId: await queueCommand(),
    queueCommand,
    create,
    nextImei,
  };
  await until(async () => {
    const list = await h.app.inject({ method: 'GET', url: `/v1/webhooks/${fixture.webhookId}/deliveries`, headers: admin });
    fixture.deliveryId = list.json().data[0]?.id ?? '';
    return fixture.deliveryId !== '';
  }, 10_000, 'a delivery of the fixture webhook');
  const replay = await h.app.inject({ method: 'POST', url: `/v1/webhooks/${fixture.webhookId}/replay`, headers: admin, payload: { from: fixture.from, to: new Date(t + 1).toISOString() } });
  expect(replay.statusCode, replay.body).toBe(202);
  fixture.replayId = replay.json().replay_id as string;
});

afterAll(async () => {
  const closing = h.close();
  // fetch (undici) may keep an idle connection open; Node would wait for its headers timeout.
  h.app.server.closeAllConnections();
  await closing;
});

describe('the table', () => {
  it('covers every route the app serves: each is in ROUTES or named public', () => {
    const served = servedRoutes(h.app).filter((r) => method(r) !== 'HEAD');
    expect(served).toEqual(expect.arrayContaining(PUBLIC_ROUTES));
    expect(served).toEqual(expect.arrayContaining(OWN_TESTS));
    const authenticated = served.filter((r) => !PUBLIC_ROUTES.includes(r) && !OWN_TESTS.includes(r) && !path(r).startsWith(PUBLIC_PREFIX));
    expect(authenticated.sort()).toEqual(Object.keys(ROUTES).sort());
  });

  it('states the scopes the OpenAPI document declares for each route, and the public ones declare none', async () => {
    const doc = await loadOpenApi(h.app);
    const declared = (route: string) => {
      const template = path(route).replace(/:([a-z_]+)/g, '{$1}');
      const op = doc.paths[template]?.[method(route).toLowerCase()] as { security?: Array<Record<string, string[]>> } | undefined;
      expect(op, `${route} is documented`).toBeDefined();
      return [...new Set((op!.security ?? []).flatMap((s) => Object.values(s).flat()))].sort();
    };
    for (const [route, spec] of Object.entries(ROUTES)) expect(declared(route), route).toEqual([...spec.scopes].sort());
    for (const route of PUBLIC_ROUTES) expect(declared(route), route).toEqual([]);
  });

  it('public routes answer without a credential', async () => {
    for (const route of PUBLIC_ROUTES.filter((r) => r.startsWith('GET '))) {
      const res = await h.app.inject({ method: 'GET', url: path(route) });
      expect(res.statusCode, route).toBe(200);
    }
    // The token endpoint authenticates the client itself, answering in the RFC 6749 shape rather than with a Bearer challenge.
    const token = await h.app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials' } });
    expect(token.json()).toHaveProperty('error');
    expect(token.headers['www-authenticate'] ?? '').not.toMatch(/^Bearer/);
  });
});

const BAD_CREDENTIALS = {
  'an unknown API key': `Bearer fleet_key_${'x'.repeat(43)}`,
  'an unknown access token': `Bearer fleet_at_${'x'.repeat(43)}`,
  'a credential of no kind this service issues': 'Bearer 0123456789abcdef',
  'another scheme': 'Basic YWRtaW46YWRtaW4=',
};

describe.each(Object.keys(ROUTES))('%s', (route) => {
  const spec = ROUTES[route]!;

  it('401 problem+json with a Bearer challenge without a credential (and for its HEAD twin)', async () => {
    const res = await send(route, {});
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
    expect(res.json()).toMatchObject({ status: 401, code: 'unauthenticated' });
    if (servedRoutes(h.app).includes(`HEAD ${path(route)}`)) {
      const head = await send(route, {}, 'HEAD');
      expect(head.statusCode).toBe(401);
      expect(head.headers['www-authenticate']).toMatch(/^Bearer /);
    }
  });

  it('401 for an unknown, garbage or non-bearer credential', async () => {
    for (const [what, authorization] of Object.entries(BAD_CREDENTIALS)) {
      const res = await send(route, { authorization });
      expect(res.statusCode, what).toBe(401);
      expect(res.headers['content-type'], what).toMatch(/^application\/problem\+json/);
      expect(res.headers['www-authenticate'], what).toMatch(/^Bearer /);
    }
  });

  it('403 naming exactly the required scope for a credential without it', async () => {
    const refused = [unrelatedScope(spec.scopes), ...spec.scopes.filter((s) => s.endsWith(':write')).map((s) => s.replace(':write', ':read') as Scope)];
    for (const scope of refused) {
      const res = await send(route, { authorization: `Bearer ${await keyWith([scope])}` });
      expect(res.statusCode, `with ${scope}`).toBe(403);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const body = res.json() as { code: string; detail: string };
      expect(body.code).toBe('insufficient_scope');
      expect(scopesIn(body.detail), body.detail).toEqual([...spec.scopes].sort());
      const challenge = String(res.headers['www-authenticate']);
      expect(challenge).toMatch(/^Bearer .*error="insufficient_scope"/);
      expect(scopesIn(/scope="([^"]*)"/.exec(challenge)?.[1] ?? '')).toEqual([...spec.scopes].sort());
    }
  });

  it('lets a credential with the scope through (write implies read)', async () => {
    for (const scope of admittingScopes(spec.scopes)) {
      const authorization = `Bearer ${await keyWith([scope])}`;
      if (spec.streaming) {
        const sse = await openSse(`${base}${(await spec.request(fixture)).url}`, { authorization });
        sse.close();
        expect(sse.status, `with ${scope}`).toBe(spec.ok);
        continue;
      }
      const res = await send(route, { authorization });
      expect(res.statusCode, `with ${scope}: ${res.body}`).toBe(spec.ok);
    }
  });
});
