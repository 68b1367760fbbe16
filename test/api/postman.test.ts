/**
 * GET /v1/postman.json: a Postman Collection v2.1 (read back by Postman's own
 * SDK, postman-collection) with one request for every operation of the
 * OpenAPI document, the base URL and the bearer credential as collection
 * variables, and bearer auth set once on the collection.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiPath, requestsOf, type PostmanCollection } from '../../api/postman.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { loadOpenApi, type OpenApiDocument } from '../support/openapi.js';

/** The part of Postman's SDK used here (its own type definitions are not reachable from a module import). */
interface SdkItem {
  request: { method: string; url: { getPath(unresolved: boolean): string }; auth?: { type: string } };
  getAuth(): { type: string; parameters(): { get(key: string): unknown } } | undefined;
}
interface SdkCollection {
  toJSON(): object;
  forEachItem(callback: (item: SdkItem) => void): void;
  variables: { toObject(): Record<string, unknown> };
}
const { Collection } = createRequire(import.meta.url)('postman-collection') as { Collection: new (json: object) => SdkCollection };

const V2_1 = 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json';

let h: ApiHarness;
let doc: OpenApiDocument;
let served: PostmanCollection;

beforeAll(async () => {
  h = await startApiHarness();
  doc = await loadOpenApi(h.app);
  const res = await h.app.inject({ method: 'GET', url: '/v1/postman.json' });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  served = res.json() as PostmanCollection;
}, 60_000);

afterAll(async () => {
  await h.close();
});

/** What the SDK writes, as plain JSON, without its `_` (metadata of its own, such as an example's preview language, that it writes only once). */
function sdkJson(collection: SdkCollection): PostmanCollection {
  return JSON.parse(JSON.stringify(collection.toJSON(), (key, value: unknown) => (key === '_' ? undefined : value))) as PostmanCollection;
}

/** `METHOD /path/{param}` of every operation of the OpenAPI document. */
function documentedOperations(): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`));
}

describe('GET /v1/postman.json', () => {
  it('is a Collection v2.1 that Postman SDK reads and writes back unchanged', () => {
    expect(served.info.schema).toBe(V2_1);
    expect(served.info.name).toBe((doc.info as { title: string }).title);
    const parsed = new Collection(served);
    const written = sdkJson(parsed);
    expect(sdkJson(new Collection(written))).toEqual(written);
    // What the SDK read is what was served: every request, with its method, path and auth.
    const read: string[] = [];
    parsed.forEachItem((item) => read.push(`${item.request.method} ${item.request.url.getPath(true)} ${item.request.auth?.type ?? 'inherit'}`));
    expect(read).toEqual(requestsOf(served.item).map((i) => `${i.request!.method} /${i.request!.url.path!.join('/')} ${(i.request!.auth as { type?: string } | undefined)?.type ?? 'inherit'}`));
  });

  it('has one request for every operation of the OpenAPI document, and no other', () => {
    const requests = requestsOf(served.item).map((i) => `${i.request!.method} ${openApiPath(i.request!.url.path!)}`);
    expect(requests.length).toBe(new Set(requests).size);
    expect([...requests].sort()).toEqual(documentedOperations().sort());
    expect(requests).toEqual(expect.arrayContaining(['GET /v1/postman.json', 'POST /v1/webhooks/{id}/test', 'GET /v1/webhooks/{id}/deliveries']));
  });

  it('takes the base URL and the bearer token from collection variables, with bearer auth on the collection', () => {
    const parsed = new Collection(served);
    expect(parsed.variables.toObject()).toEqual({ baseUrl: (doc.servers as Array<{ url: string }>)[0]!.url, bearerToken: '' });
    expect(served.auth).toEqual({ type: 'bearer', bearer: [{ key: 'token', value: '{{bearerToken}}', type: 'string' }] });
    const auth = new Map<string, string>();
    parsed.forEachItem((item) => {
      const own = item.getAuth();
      expect(own?.type, item.request.url.getPath(true)).toBeDefined();
      if (own!.type === 'bearer') expect(own!.parameters().get('token')).toBe('{{bearerToken}}');
      auth.set(`${item.request.method} ${item.request.url.getPath(true)}`, own!.type);
    });
    // Requests inherit the collection's bearer auth, except those that take no bearer credential.
    expect(auth.get('GET /v1/devices')).toBe('bearer');
    expect(auth.get('POST /v1/webhooks/:id/test')).toBe('bearer');
    for (const open of ['POST /v1/oauth/token', 'POST /v1/sessions', 'GET /v1/sessions/current', 'GET /healthz', 'GET /v1/openapi.json', 'GET /v1/postman.json']) {
      expect(auth.get(open), open).toBe('noauth');
    }
    for (const r of requestsOf(served.item)) expect(r.request!.url.host).toEqual(['{{baseUrl}}']);
  });

  it('leaves optional query parameters off (limit has its default), so a list request works as imported', () => {
    const list = requestsOf(served.item).find((i) => i.request!.method === 'GET' && openApiPath(i.request!.url.path!) === '/v1/webhooks/{id}/deliveries')!;
    const query = list.request!.url.query as Array<{ key: string; value: string; disabled?: boolean }>;
    expect(Object.fromEntries(query.map((q) => [q.key, q.disabled ? 'off' : q.value]))).toEqual({ state: 'off', event: 'off', limit: '50', cursor: 'off' });
  });

  it('is converted once and served the same afterwards', async () => {
    const again = await h.app.inject({ method: 'GET', url: '/v1/postman.json' });
    expect(again.json()).toEqual(served);
  });
});
