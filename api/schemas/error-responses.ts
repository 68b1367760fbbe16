/**
 * The errors an operation can answer, worked out from what its route is.
 * Routing, validation, authentication, scope checks and body parsing are done
 * by the shared hooks and error handlers the same way for every route, so
 * these answers follow from the route's inputs and scope alone; a route
 * documents only the errors of its own (409 conflicts, a 404 for an id in the
 * query). The 429 of rate-limited routes is added with the rate-limit headers
 * in api/plugins/openapi.ts.
 */
import { Problem } from './common.js';

/** What about a route decides the errors it can answer. */
export interface RouteTraits {
  /** Media types the request body may be sent in; empty when the route takes no body. */
  bodyTypes: readonly string[];
  /** Has a body, query, path parameters or headers that are validated (400). */
  validated: boolean;
  /** Names a resource by a path parameter, which may not exist or be another customer's (404) or be too long (414). */
  pathParams: boolean;
  /** Needs a credential (401) with a scope (403). */
  authenticated: boolean;
}

/** The app's limits the descriptions quote. */
export interface RequestLimits {
  bodyLimit: number;
  maxParamLength: number;
}

export interface ProblemResponse {
  description: string;
  headers?: Record<string, { type: 'string'; description: string }>;
  content: { 'application/problem+json': { schema: typeof Problem } };
}

/** A problem+json response; also how a route declares an error of its own (`409: problemResponse('…')`). */
export function problemResponse(description: string, headers?: ProblemResponse['headers']): ProblemResponse {
  return { description, ...(headers ? { headers } : {}), content: { 'application/problem+json': { schema: Problem } } };
}

const WWW_AUTHENTICATE = { type: 'string', description: '`Bearer`, with `error` and `scope` when a credential was sent' } as const;

/** Status → response of the errors a route with these traits can answer. */
export function errorResponses(t: RouteTraits, limits: RequestLimits): Record<number, ProblemResponse> {
  const out: Record<number, ProblemResponse> = {};
  if (t.validated) {
    out[400] = problemResponse(
      'The request is invalid: `code` says how (`validation_failed`, `invalid_body`, a bad cursor…) and `errors[].pointer` names each bad field (/body/…, /query/…, /params/…)',
    );
  }
  if (t.authenticated) {
    out[401] = problemResponse('No credential, or an unknown, expired or revoked one (`unauthenticated`, `invalid_credentials`)', {
      'WWW-Authenticate': WWW_AUTHENTICATE,
    });
    out[403] = problemResponse(
      "The credential lacks the scope this operation needs (`insufficient_scope`); with the panel's session cookie, a POST, PUT, PATCH or DELETE without its `X-CSRF-Token` (`csrf_failed`)",
      {
        'WWW-Authenticate': WWW_AUTHENTICATE,
      },
    );
  }
  if (t.pathParams) {
    out[404] = problemResponse("No such resource, or another customer's (`not_found`)");
    out[414] = problemResponse(`A path parameter is longer than ${limits.maxParamLength} characters (\`uri_too_long\`)`);
  }
  if (t.bodyTypes.length > 0) {
    out[413] = problemResponse(`The body is larger than ${limits.bodyLimit} bytes (\`body_too_large\`)`);
    out[415] = problemResponse(`The body is not sent as ${t.bodyTypes.join(' or ')} (\`unsupported_media_type\`)`);
  }
  return out;
}
