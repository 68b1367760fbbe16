/**
 * The client-credentials token request of RFC 6749 (§4.4, §2.3.1, §5.2):
 * reading the request (JSON or form body, client credentials in the body or
 * with HTTP Basic), the RFC's error shape, and the endpoint's limits. Issuing
 * is the route's job.
 */
import type { Clock } from '../core/clock.js';
import { ALL_SCOPES, type Scope } from '../core/events.js';
import { fullBucket, take, type BucketLimits, type BucketState } from '../core/token-bucket.js';
import { AttemptThrottle, isRefusal, type Attempt, type AttemptLimits } from './attempt-throttle.js';
import { hasScope } from './plugins/auth.js';
import type { OAuthErrorCode } from './schemas/oauth.js';

export const TOKEN_TTL_S = 3600;
/** Failed client authentications: 10 per client id and per address in 15 minutes (docs/api-platform.md). */
export const TOKEN_SECRET_LIMITS: AttemptLimits = { maxFailures: 10, windowMs: 15 * 60_000 };
/** Tokens issued per client: bursts of 20, refilled at 30 a minute, so at most 50 OAuthTokenIssued events in any minute. */
export const TOKEN_ISSUE_LIMITS: BucketLimits = { capacity: 20, perMinute: 30 };
/** Client ids are `cli_` and 26 characters; a longer one is unknown anyway, and must not make a long key. */
const MAX_KEYED_ID = 64;

export class OAuthError extends Error {
  constructor(
    /** 413 is ours: RFC 6749 names no status for a body too large, so it keeps the RFC's body shape with invalid_request. */
    readonly status: 400 | 401 | 413 | 429,
    readonly error: OAuthErrorCode,
    readonly description: string,
    /** Seconds, sent as Retry-After (the 429s). */
    readonly retryAfterS?: number,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

export interface TokenRequest {
  clientId: string;
  clientSecret: string;
  /** Requested scopes, or null for all of the client's. */
  scopes: Scope[] | null;
}

/** RFC 6749 §2.3.1: both parts of HTTP Basic are form-urlencoded before base64; bad escapes are a client that failed to authenticate. */
function formDecoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new OAuthError(401, 'invalid_client', 'HTTP Basic credentials have malformed percent-encoding.');
  }
}

function basicCredentials(header: string | undefined): { id: string; secret: string } | null {
  const match = header ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new OAuthError(401, 'invalid_client', 'HTTP Basic credentials must be client_id:client_secret.');
  return { id: formDecoded(decoded.slice(0, colon)), secret: formDecoded(decoded.slice(colon + 1)) };
}

function stringField(body: Record<string, unknown>, name: string): string | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new OAuthError(400, 'invalid_request', `${name} must be a string.`);
  return v;
}

export function parseScopeParam(raw: string | undefined): Scope[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  const requested = [...new Set(raw.trim().split(/\s+/))];
  const unknown = requested.filter((s) => !ALL_SCOPES.includes(s as Scope));
  if (unknown.length > 0) throw new OAuthError(400, 'invalid_scope', `Unknown scope ${unknown.join(', ')}.`);
  return requested as Scope[];
}

/** Reads and checks the request's shape; the client's secret and scopes are checked by `grantedScopes` and the route. */
export function parseTokenRequest(body: unknown, authorization: string | undefined): TokenRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthError(400, 'invalid_request', 'Send the parameters as application/x-www-form-urlencoded or JSON.');
  }
  const fields = body as Record<string, unknown>;
  const grantType = stringField(fields, 'grant_type');
  if (!grantType) throw new OAuthError(400, 'invalid_request', 'grant_type is required.');
  if (grantType !== 'client_credentials') {
    throw new OAuthError(400, 'unsupported_grant_type', `grant_type ${grantType} is not supported; use client_credentials.`);
  }
  const basic = basicCredentials(authorization);
  const bodyId = stringField(fields, 'client_id');
  const bodySecret = stringField(fields, 'client_secret');
  if (basic && (bodyId !== undefined || bodySecret !== undefined)) {
    throw new OAuthError(400, 'invalid_request', 'Authenticate the client with HTTP Basic or with body parameters, not both.');
  }
  const clientId = basic?.id ?? bodyId;
  const clientSecret = basic?.secret ?? bodySecret;
  if (!clientId || !clientSecret) {
    throw new OAuthError(401, 'invalid_client', 'client_id and client_secret are required.');
  }
  return { clientId, clientSecret, scopes: parseScopeParam(stringField(fields, 'scope')) };
}

/** The scopes a token gets: those requested (each held by the client, write implying read), or all of the client's. */
export function grantedScopes(clientScopes: readonly Scope[], requested: Scope[] | null): Scope[] {
  if (!requested) return [...clientScopes];
  const missing = requested.filter((s) => !hasScope(clientScopes, s));
  if (missing.length > 0) {
    throw new OAuthError(400, 'invalid_scope', `The client is not allowed ${missing.join(', ')}.`);
  }
  // Canonical order, so equal grants read the same.
  return ALL_SCOPES.filter((s) => requested.includes(s));
}

/**
 * The token endpoint's limits, kept in this process like the request rate
 * limiter (N API nodes allow N times them; a shared limiter is a later issue):
 * client authentications on the attempt throttle of logins, counted before the
 * secret is checked, and issuance on a token bucket per client, which bounds
 * the events a client can append.
 */
export class TokenEndpointLimits {
  private readonly secrets: AttemptThrottle;
  /** Per client that authenticated: bounded by the clients that exist. */
  private readonly issued = new Map<string, BucketState>();

  constructor(private readonly clock: Clock) {
    this.secrets = new AttemptThrottle(clock, TOKEN_SECRET_LIMITS);
  }

  /** Takes the attempt's slot on the client id and the address, or throws the 429. */
  beginAuthentication(clientId: string, address: string): Attempt {
    const attempt = this.secrets.begin([`client:${clientId.slice(0, MAX_KEYED_ID)}`, `address:${address}`]);
    if (!isRefusal(attempt)) return attempt;
    throw new OAuthError(
      429,
      'rate_limited',
      `Too many failed client authentications for this client or from this address; retry in ${attempt.retryAfterS} s.`,
      attempt.retryAfterS,
    );
  }

  /** Takes one token of the client's issuance bucket, or throws the 429. */
  takeIssuance(clientId: string): void {
    const now = this.clock.now();
    let bucket = this.issued.get(clientId);
    if (!bucket) this.issued.set(clientId, (bucket = fullBucket(TOKEN_ISSUE_LIMITS, now)));
    const result = take(bucket, TOKEN_ISSUE_LIMITS, now);
    if (result.allowed) return;
    const { perMinute, capacity } = TOKEN_ISSUE_LIMITS;
    throw new OAuthError(
      429,
      'rate_limited',
      `This client was issued more than ${perMinute} tokens a minute (bursts of ${capacity}); reuse a token until it expires. Retry in ${result.retryAfterS} s.`,
      result.retryAfterS,
    );
  }
}
