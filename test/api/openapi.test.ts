import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_KINDS } from '../../core/alarms.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
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

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
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

  it('gives every operation a tag, a summary and a unique operationId; secured ones a scope and a 429', () => {
    const ids = new Set<string>();
    for (const { path, method, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(op.tags, where).toHaveLength(1);
      expect(op.summary, where).toEqual(expect.any(String));
      expect(ids.has(op.operationId as string), `${where}: duplicate operationId`).toBe(false);
      ids.add(op.operationId as string);
      const security = op.security as Array<Record<string, string[]>>;
      if (security.length > 0) {
        expect(Object.keys((op.responses as Record<string, unknown>) ?? {}), where).toContain('429');
        expect(Object.values(security[0]!)[0], where).toHaveLength(1);
      }
    }
    const byId = Object.fromEntries(operations().map((o) => [o.op.operationId, o]));
    expect(byId.createApiKey).toMatchObject({ path: '/v1/api-keys', method: 'post' });
    expect(byId.issueOAuthToken!.op.security).toEqual([]);
    expect(doc.paths['/v1/devices']!.get).toMatchObject({ security: expect.arrayContaining([{ bearer: ['devices:read'] }]) });
    expect(byId.streamLive!.op.security).toEqual([
      { bearer: ['positions:read'] },
      { oauth2: ['positions:read'] },
      { bearer: ['events:read'] },
      { oauth2: ['events:read'] },
    ]);
  });

  it('documents every webhook kind of API.md with a payload schema', () => {
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

  it('the validator does reject a body that does not match', () => {
    expect(() => v.check('GET', '/v1/api-keys', 200, { data: [{ id: 1 }], pagination: {} })).toThrow(/does not match/);
    expect(() =>
      v.check('POST', '/v1/oauth/token', 400, { error: 'invalid_request', error_description: 'x' }, 'application/json'),
    ).not.toThrow();
  });

  it('a sample harsh-brake webhook payload (SPEC §6) validates against its schema', () => {
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
