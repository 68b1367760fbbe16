/**
 * The Postman collection (v2.1) served at /v1/postman.json: the OpenAPI
 * document converted by openapi-to-postmanv2, then made ready to import: the
 * base URL and the bearer credential are collection variables (`baseUrl`,
 * `bearerToken`), authentication is set once on the collection, and the
 * operations that take no bearer credential (the token endpoint, the panel's
 * session routes, health) send none.
 */
import { convertV2, type Options } from 'openapi-to-postmanv2';

export interface PostmanCollection {
  info: { name: string; schema: string; [key: string]: unknown };
  item: PostmanItem[];
  auth?: unknown;
  variable?: Array<{ key: string; value: string; type?: string; description?: string }>;
  [key: string]: unknown;
}

export interface PostmanItem {
  name: string;
  item?: PostmanItem[];
  request?: { method: string; url: { path?: string[]; [key: string]: unknown }; auth?: unknown; [key: string]: unknown };
  [key: string]: unknown;
}

type OpenApiOperations = Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;

const OPTIONS: Options = {
  folderStrategy: 'Tags',
  requestNameSource: 'Fallback',
  parametersResolution: 'Schema',
  // Optional parameters are listed but off: an enabled `cursor=<string>` would be a 400 on every list.
  enableOptionalParameters: false,
  // Every request inherits the collection's bearer auth; the few public ones are set to none below.
  alwaysInheritAuthentication: true,
  includeAuthInfoInExample: false,
};

export const BEARER_VARIABLE = 'bearerToken';

/** Converts `doc` (this API's OpenAPI document) into an importable collection. */
export async function postmanCollection(doc: { paths: OpenApiOperations }): Promise<PostmanCollection> {
  const converted = await new Promise<PostmanCollection>((resolve, reject) => {
    convertV2({ type: 'json', data: doc }, OPTIONS, (err, result) => {
      if (err) return reject(new Error(`OpenAPI to Postman conversion failed: ${err.message}`));
      const data = result?.result ? result.output?.[0]?.data : undefined;
      if (!data) return reject(new Error(`OpenAPI to Postman conversion failed: ${result?.reason ?? 'no collection'}`));
      resolve(data as PostmanCollection);
    });
  });
  return withCollectionAuth(converted, doc.paths);
}

/** Bearer auth once on the collection, from a variable; none on the operations whose security names no bearer scheme. */
function withCollectionAuth(collection: PostmanCollection, paths: OpenApiOperations): PostmanCollection {
  collection.auth = { type: 'bearer', bearer: [{ key: 'token', value: `{{${BEARER_VARIABLE}}}`, type: 'string' }] };
  const variables = (collection.variable ?? []).filter((v) => v.key !== BEARER_VARIABLE);
  variables.push({ key: BEARER_VARIABLE, value: '', type: 'string', description: 'An API key (fleet_key_…) or an OAuth access token (fleet_at_…)' });
  collection.variable = variables;
  for (const item of requestsOf(collection.item)) {
    const request = item.request!;
    const security = paths[openApiPath(request.url.path ?? [])]?.[request.method.toLowerCase()]?.security ?? [];
    if (security.some((requirement) => 'bearer' in requirement)) delete request.auth;
    else request.auth = { type: 'noauth' };
  }
  return collection;
}

/** Every request of the collection, through its folders. */
export function requestsOf(items: PostmanItem[]): PostmanItem[] {
  return items.flatMap((i) => (i.item ? requestsOf(i.item) : i.request ? [i] : []));
}

/** A request's path segments (`v1`, `webhooks`, `:id`) as the OpenAPI path template (`/v1/webhooks/{id}`). */
export function openApiPath(segments: readonly string[]): string {
  return '/' + segments.map((s) => (s.startsWith(':') ? `{${s.slice(1)}}` : s)).join('/');
}
