import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TAGS, fallbackOperationId } from '../../api/plugins/openapi.js';
import { EVENT_KINDS } from '../../core/alarms.js';
import { loadConfig } from '../../core/config.js';
import { silentLogger } from '../../core/logger.js';
import { startPlatform } from '../../main.js';
import { bearer, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { freePorts } from '../support/ports.js';
import { ResponseValidator, expectDocumented, loadOpenApi, type OpenApiDocument } from '../support/openapi.js';

let h: ApiHarness;
let doc: OpenApiDocument;
let v: ResponseValidator;
beforeAll(async () => {
  h = await startApiHarness();
  doc = await loadOpenApi(h.app);
  v = new ResponseValidator(doc);
});
afterAll(async () => {
  await h.close();
});

const auth = bearer;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every route Fastify knows, rebuilt from printRoutes' tree (children print their path relative to the parent). */
function registeredRoutes(app: ApiHarness['app']): Array<{ method: string; path: string }> {
  const out: Array<{ method: string; path: string }> = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+) \(([A-Z, ]+)\)/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    const full = (stack[depth - 1] ?? '') + m[2]!;
    stack[depth] = full;
    for (const method of m[3]!.split(', ')) out.push({ method, path: full });
  }
  return out;
}

function operations(): Array<{ path: string; method: string; op: Record<string, unknown> }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ path, method, op: op as Record<string, unknown> })),
  );
}

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 with info, servers and the bearer and OAuth2 security schemes', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    expect(doc.servers).toEqual([expect.objectContaining({ url: expect.any(String) })]);
    const schemes = (doc.components as { securitySchemes: Record<string, Record<string, unknown>> }).securitySchemes;
    expect(schemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.oauth2).toMatchObject({ type: 'oauth2', flows: { clientCredentials: expect.any(Object) } });
  });

  it('contains every registered /v1 route (and the ops routes)', () => {
    const routes = registeredRoutes(h.app).filter(
      (r) => r.method !== 'HEAD' && (r.path.startsWith('/v1/') || ['/healthz', '/readyz', '/metrics'].includes(r.path)),
    );
    expect(routes.length).toBeGreaterThan(15);
    const missing = routes.filter((r) => {
      const path = r.path.replace(/:([A-Za-z_]+)/g, '{$1}');
      return !doc.paths[path]?.[r.method.toLowerCase()];
    });
    expect(missing).toEqual([]);
  });

  it('gives every operation a tag, a summary and an operationId of its own, and operationIds are unique', () => {
    const tagNames: string[] = TAGS.map((t) => t.name);
    const all = [
      ...operations().map(({ path, method, op }) => ({ where: `${method.toUpperCase()} ${path}`, method, path, op })),
      ...Object.entries(doc.webhooks ?? {}).map(([kind, item]) => ({
        where: `webhook ${kind}`,
        method: 'post',
        path: null,
        op: (item as { post: Record<string, unknown> }).post,
      })),
    ];
    const ids = new Map<string, string>();
    for (const { where, method, path, op } of all) {
      expect(op.tags, where).toHaveLength(1);
      expect(tagNames, where).toContain((op.tags as string[])[0]);
      expect(op.summary, where).toEqual(expect.stringMatching(/\S/));
      const id = op.operationId as string;
      // camelCase verb + resource (api/app.ts); an HTTP method or "ById" in it is the derived fallback of a route that stated none.
      expect(id, where).toEqual(expect.stringMatching(/^[a-z]+[A-Z][A-Za-z0-9]*$/));
      expect(id, where).not.toMatch(/^(post|put|patch)[A-Z]|By[A-Z]/);
      if (path) {
        const url = path.replace(/\{(\w+)\}/g, ':$1');
        expect(op.summary, where).not.toBe(`${method.toUpperCase()} ${url}`);
        if (url.includes(':') || !['get', 'delete'].includes(method)) expect(id, where).not.toBe(fallbackOperationId(method, url));
      }
      expect(ids.get(id), `${where}: operationId ${id} is also used by`).toBeUndefined();
      ids.set(id, where);
    }
    expect(ids.size).toBe(all.length);
    const byId = Object.fromEntries(operations().map((o) => [o.op.operationId, `${o.method.toUpperCase()} ${o.path}`]));
    expect(byId).toMatchObject({
      listEvents: 'GET /v1/events',
      getEvent: 'GET /v1/events/{id}',
      listFeed: 'GET /v1/feed',
      createGeofence: 'POST /v1/geofences',
      deleteGeofence: 'DELETE /v1/geofences/{id}',
      getDriverScore: 'GET /v1/drivers/{id}/score',
      createApiKey: 'POST /v1/api-keys',
      createWebhook: 'POST /v1/webhooks',
      listWebhooks: 'GET /v1/webhooks',
      updateWebhook: 'PATCH /v1/webhooks/{id}',
      rotateWebhookSecret: 'POST /v1/webhooks/{id}/rotate-secret',
    });
    // A body the route lets you leave out (Type.Optional) is not documented as required.
    expect(doc.paths['/v1/webhooks/{id}/rotate-secret']!.post!.requestBody).toMatchObject({ required: false });
    expect(doc.paths['/v1/webhooks']!.post!.requestBody).toMatchObject({ required: true });
  });

  it('secures scoped operations with one scope per requirement and a 429', () => {
    const byId = Object.fromEntries(operations().map((o) => [o.op.operationId, o]));
    for (const { path, method, op } of operations()) {
      const security = op.security as Array<Record<string, string[]>>;
      if (security.length === 0) continue;
      // The session routes are not rate limited by the tenant's bucket; every scoped operation is.
      if (security.some((r) => 'bearer' in r)) expect(Object.keys(op.responses as Record<string, unknown>), `${method} ${path}`).toContain('429');
      // Bearer and OAuth requirements name one scope each; the panel's session cookie has every scope and names none.
      for (const requirement of security) {
        const [scheme, scopes] = Object.entries(requirement)[0]!;
        expect(scopes, `${method} ${path}`).toHaveLength(scheme === 'session' ? 0 : 1);
      }
    }
    expect(byId.issueOAuthToken!.op.security).toEqual([]);
    expect(doc.paths['/v1/devices']!.get).toMatchObject({ security: expect.arrayContaining([{ bearer: ['devices:read'] }]) });
    expect(byId.streamLive!.op.security).toEqual([
      { bearer: ['positions:read'] },
      { oauth2: ['positions:read'] },
      { bearer: ['events:read'] },
      { oauth2: ['events:read'] },
      { bearer: ['commands:read'] },
      { oauth2: ['commands:read'] },
      { session: [] },
    ]);
    expect(byId.getCurrentSession!.op.security).toEqual([{ session: [] }]);
    expect(byId.createSession!.op.security).toEqual([]);
  });

  it('lists the errors each operation can answer: 401/403 when secured, 404/414 for a path id, 413/415 with a body, never 409 on a read', () => {
    for (const { path, method, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(op.responses as Record<string, unknown>);
      const security = op.security as Array<Record<string, unknown>>;
      if (security.some((r) => 'bearer' in r)) expect(statuses, where).toEqual(expect.arrayContaining(['401', '403', '429']));
      if (security.length > 0) expect(statuses, where).toContain('401');
      if (path.includes('{')) expect(statuses, where).toEqual(expect.arrayContaining(['404', '414']));
      // The token endpoint answers RFC 6749 errors (a 415 becomes 400 invalid_request) and documents them itself.
      if (op.requestBody && op.operationId !== 'issueOAuthToken') expect(statuses, where).toEqual(expect.arrayContaining(['413', '415']));
      if (!op.requestBody) expect(statuses, where).not.toEqual(expect.arrayContaining(['415']));
      if (method === 'get') expect(statuses, where).not.toContain('409');
    }
    const responses = (p: string, m: string) => Object.keys(doc.paths[p]![m]!.responses!).sort();
    // Spot checks against what the routes do: only registration and driver creation have a uniqueness rule.
    expect(responses('/v1/devices', 'post')).toEqual(['201', '400', '401', '403', '409', '413', '415', '429']);
    expect(responses('/v1/geofences', 'post')).toEqual(['201', '400', '401', '403', '413', '415', '429']);
    expect(responses('/v1/drivers/{id}', 'get')).toEqual(['200', '400', '401', '403', '404', '414', '429']);
    expect(responses('/v1/devices/{id}', 'patch')).toEqual(['200', '400', '401', '403', '404', '413', '414', '415', '429']);
    expect(Object.keys(doc.paths['/v1/devices/{id}']!.patch!.requestBody!.content)).toEqual(['application/json', 'application/merge-patch+json']);
    // Refused before the rate limiter takes a token: no rate-limit headers.
    const getDriver = doc.paths['/v1/drivers/{id}']!.get!.responses! as Record<string, { headers?: Record<string, unknown> }>;
    expect(Object.keys(getDriver['414']!.headers ?? {})).toEqual([]);
    expect(Object.keys(getDriver['401']!.headers ?? {})).toEqual(['WWW-Authenticate']);
    expect(getDriver['404']!.headers).toHaveProperty('RateLimit');
    expect(responses('/v1/events', 'get')).toEqual(['200', '400', '401', '403', '429']);
    expect(responses('/healthz', 'get')).toEqual(['200']);
  });

  it('documents every webhook kind with a payload schema', () => {
    const webhooks = doc.webhooks as Record<string, { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }>;
    expect(Object.keys(webhooks).sort()).toEqual([...EVENT_KINDS].sort());
    const schemas = (doc.components as { schemas: Record<string, { properties: Record<string, unknown> }> }).schemas;
    for (const [kind, hook] of Object.entries(webhooks)) {
      const ref = hook.post.requestBody.content['application/json']!.schema.$ref;
      const schema = schemas[ref.split('/').pop()!];
      expect(schema, kind).toBeDefined();
      for (const field of ['event', 'event_id', 'device_id', 'device_name', 'driver_id', 'severity', 'position']) {
        expect(schema!.properties, `${kind}.${field}`).toHaveProperty(field);
      }
    }
    expect(schemas.HarshDrivingPayload!.properties).toHaveProperty('delta_kmh');
    expect(schemas.GeofenceExitPayload!.properties).toHaveProperty('dwell_s');
  });

  it('names the public URL as its server and in the OAuth token URL: FLEET_PUBLIC_URL, else localhost on the HTTP port', async () => {
    const serverAndTokenUrl = (d: OpenApiDocument) => {
      const oauth2 = (d.components as { securitySchemes: { oauth2: { flows: { clientCredentials: { tokenUrl: string } } } } }).securitySchemes.oauth2;
      return [(d.servers as Array<{ url: string }>)[0]!.url, oauth2.flows.clientCredentials.tokenUrl];
    };
    expect(serverAndTokenUrl(doc)).toEqual(['http://localhost:3000', 'http://localhost:3000/v1/oauth/token']);
    const dir = mkdtempSync(join(tmpdir(), 'fleet-openapi-'));
    const [port] = await freePorts(1);
    const base = { FLEET_DATA_DIR: dir, FLEET_SECRET_KEY: randomBytes(32).toString('base64'), FLEET_HTTP_HOST: '127.0.0.1', FLEET_HTTP_PORT: String(port) };
    try {
      for (const [env, server] of [
        [{ FLEET_PUBLIC_URL: 'https://gw.example.com/fleet/' }, 'https://gw.example.com/fleet'],
        [{}, `http://localhost:${port}`],
      ] as const) {
        // The process as `fleet start` runs it: configuration from the environment, served over HTTP.
        const platform = await startPlatform(loadConfig({ ...base, ...env }), ['projections', 'api'], silentLogger);
        try {
          const served = (await (await fetch(`http://127.0.0.1:${platform.ports.http}/v1/openapi.json`)).json()) as OpenApiDocument;
          expect(serverAndTokenUrl(served)).toEqual([server, `${server}/v1/oauth/token`]);
        } finally {
          await platform.stop();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves browsable docs at /docs', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });
});

describe('real responses match the document', () => {
  it('device registration, reads, lists and errors', async () => {
    const { apiKey } = await h.newCustomer();
    const created = await h.app.inject({
      method: 'POST', url: '/v1/devices', headers: auth(apiKey), payload: { imei: '356938035643809', model: 'FMB920', name: 'Van 1' },
    });
    expectDocumented(v, 'POST', '/v1/devices', created);
    expectDocumented(v, 'GET', '/v1/devices/{id}', await h.app.inject({ method: 'GET', url: `/v1/devices/${created.json().id}`, headers: auth(apiKey) }));
    expectDocumented(v, 'GET', '/v1/devices', await h.app.inject({ method: 'GET', url: '/v1/devices', headers: auth(apiKey) }));
    const notFound = await h.app.inject({ method: 'GET', url: '/v1/devices/dev_nope', headers: auth(apiKey) });
    expect(notFound.headers['content-type']).toMatch(/^application\/problem\+json/);
    expectDocumented(v, 'GET', '/v1/devices/{id}', notFound);
    expectDocumented(v, 'GET', '/healthz', await h.app.inject({ method: 'GET', url: '/healthz' }));
  });

  it('the errors every route of a kind answers: 401, 403, 413 and 415', async () => {
    const { customerId, apiKey } = await h.newCustomer();
    const post = (headers: Record<string, string>, payload: string) => h.app.inject({ method: 'POST', url: '/v1/drivers', headers, payload });
    const json = { 'content-type': 'application/json' };
    const cases = [
      [401, await post(json, '{"name":"A"}')],
      [403, await post({ ...json, ...auth(await h.newKey(customerId, ['drivers:read'])) }, '{"name":"A"}')],
      [413, await post({ ...json, ...auth(apiKey) }, JSON.stringify({ name: 'x'.repeat(300 * 1024) }))],
      [415, await post({ 'content-type': 'application/xml', ...auth(apiKey) }, '<driver name="A"/>')],
    ] as const;
    for (const [status, res] of cases) {
      expect(res.statusCode).toBe(status);
      expectDocumented(v, 'POST', '/v1/drivers', res);
    }
  });

  it('the validator does reject a body that does not match', () => {
    expect(() => v.check('GET', '/v1/api-keys', 200, { data: [{ id: 1 }], pagination: {} })).toThrow(/does not match/);
    expect(() => v.check('GET', '/v1/api-keys', 409, { status: 409 })).toThrow(/documents no 409/);
    expect(() => v.check('GET', '/v1/devices/{id}', 200, undefined)).toThrow(/none was sent/);
    expect(() => v.check('DELETE', '/v1/geofences/{id}', 204, undefined)).not.toThrow();
    expect(v.pathOf('/v1/positions/latest?device_id=dev_1')).toBe('/v1/positions/latest');
    expect(v.pathOf('/v1/drivers/drv_1/score')).toBe('/v1/drivers/{id}/score');
    expect(() => v.pathOf('/v1/drivers/drv_1/x')).toThrow(/no path/);
    expect(() =>
      v.check('POST', '/v1/oauth/token', 400, { error: 'invalid_request', error_description: 'x' }, 'application/json'),
    ).not.toThrow();
  });

  it('a sample harsh-brake webhook payload (the documented example) validates against its schema', () => {
    const validator = new ResponseValidator({
      ...doc,
      paths: {
        '/sample': {
          post: {
            responses: { '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/HarshDrivingPayload' } } } } },
          },
        },
      },
    });
    const payload = {
      event: 'event.harsh_brake',
      event_id: 'evt_01jd5x',
      occurred_at: '2026-11-22T08:00:00.000Z',
      sequence: 12,
      device_id: 'dev_01',
      device_name: 'Van 12',
      driver_id: null,
      severity: 'medium',
      delta_kmh: -18.5,
      duration_ms: 1200,
      position: { lat: 56.95, lng: 24.1, speed_kmh: 31.5, timestamp: '2026-11-22T08:00:00.000Z' },
    };
    expect(() => validator.check('POST', '/sample', 200, payload)).not.toThrow();
    expect(() => validator.check('POST', '/sample', 200, { ...payload, event: 'geofence.enter' })).toThrow();
  });
});
