/**
 * Bearer authentication and scope checks, as two onRequest hooks so the rate
 * limiter can sit between them (a request refused for its scope still counts
 * against its tenant and carries the rate-limit headers). api/plugins/access.ts
 * attaches them to the routes that name a scope.
 *
 * A bearer credential is an API key (`fleet_key_…`) or an OAuth access token
 * (`fleet_at_…`), told apart by prefix. Only SHA-256 hashes are stored: the
 * lookup is by hash and the final comparison constant-time. A route names the
 * scope it needs in `config.scope` (an array means any one of them); write
 * implies read; no scope means the route is public.
 *
 * Without an Authorization header, the panel's `fleet_session` cookie
 * authenticates instead (api/session-cookie.ts): the customer's full access,
 * and for POST, PUT, PATCH and DELETE only with the session's X-CSRF-Token.
 */
import type Database from 'better-sqlite3';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Clock } from '../../core/clock.js';
import { API_KEY_PREFIX, OAUTH_TOKEN_PREFIX, hashesEqual, sha256Hex } from '../../core/credentials.js';
import { ALL_SCOPES, type Plan, type Scope } from '../../core/events.js';
import type { ProjectionsView, RateLimit } from '../context.js';
import { CredentialCache } from '../credential-cache.js';
import type { KeyUsageRecorder } from '../key-usage.js';
import { ApiError } from '../problem.js';
import { apiKeyByHash, oauthTokenByHash, type ApiKeyRecord, type OAuthTokenRecord } from '../queries/credentials.js';
import { sessionByHash, type SessionRecord } from '../queries/users.js';
import { CSRF_HEADER, STATE_CHANGING_METHODS, csrfMatches, sessionTokenOf } from '../session-cookie.js';

export interface AuthContext {
  customerId: string;
  /** Which credential: an API key (`key_…`), an OAuth token of a client (`cli_…`) or a panel session (`ses_…`). */
  credential: { kind: 'api_key' | 'oauth_token' | 'session'; id: string };
  scopes: Scope[];
  plan: Plan;
  /** The customer's agreed rate limit; null: its plan's. */
  rateLimit: RateLimit | null;
  /** When the credential stops working (an OAuth token's or a session's expiry); null for API keys, which live until revoked. */
  expiresAt: number | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyContextConfig {
    /** The scope a route requires (an array: any one of them); absent means the route is public. */
    scope?: Scope | readonly Scope[];
  }
}

const REALM = 'realm="fleet"';

export function hasScope(granted: readonly Scope[], needed: Scope): boolean {
  if (granted.includes(needed)) return true;
  if (needed.endsWith(':read')) return granted.includes(needed.replace(':read', ':write') as Scope);
  return false;
}

/** The scopes a route's `config.scope` accepts (any one of them), or null for a public route. */
export function scopesOf(scope: Scope | readonly Scope[] | undefined): readonly Scope[] | null {
  if (!scope) return null;
  return typeof scope === 'string' ? [scope] : scope;
}

export interface AuthDeps {
  readModelDb: Database.Database;
  clock: Clock;
  keyUsage: KeyUsageRecorder;
  /** Brings the read models up to date; tried once before refusing a credential we do not know yet. */
  catchUp: () => Promise<void>;
  /** The runner's committed batches, which invalidate the credential caches. */
  onApplied: ProjectionsView['onApplied'];
  /** The HMAC key of CSRF tokens (api/session-cookie.ts), the same on every API node. */
  csrfKey: Buffer;
}

interface Caches {
  keys: CredentialCache<ApiKeyRecord>;
  tokens: CredentialCache<OAuthTokenRecord>;
}

function invalidToken(detail: string): ApiError {
  return new ApiError(401, 'invalid_credentials', detail, [], {
    'WWW-Authenticate': `Bearer ${REALM}, error="invalid_token", error_description="${detail}"`,
  });
}

/**
 * Looks a hash up and turns the row into a context. On a miss the read models are brought
 * up to date once (a credential created a moment ago) and the lookup tried again; a hit,
 * the usual case, stays synchronous.
 */
function lookup<T, R = AuthContext>(find: () => T | null, catchUp: () => Promise<void>, toContext: (found: T | null) => R): R | Promise<R> {
  const found = find();
  if (found) return toContext(found);
  return catchUp().then(() => toContext(find()));
}

function authenticateApiKey(secret: string, deps: AuthDeps, caches: Caches): AuthContext | Promise<AuthContext> {
  const hash = sha256Hex(secret);
  return lookup(
    () => caches.keys.get(hash, () => apiKeyByHash(deps.readModelDb, hash)),
    deps.catchUp,
    (key) => {
      if (!key || !hashesEqual(key.secret_sha256, hash)) throw invalidToken('The API key is unknown or revoked.');
      if (key.revoked_at !== null) throw invalidToken('The API key is unknown or revoked.');
      deps.keyUsage.touch(key.customer_id, key.key_id, deps.clock.now());
      return {
        customerId: key.customer_id,
        credential: { kind: 'api_key', id: key.key_id },
        scopes: key.scopes,
        plan: key.plan,
        rateLimit: key.rate_limit,
        expiresAt: null,
      };
    },
  );
}

function authenticateOAuthToken(secret: string, deps: AuthDeps, caches: Caches): AuthContext | Promise<AuthContext> {
  const hash = sha256Hex(secret);
  return lookup(
    () => caches.tokens.get(hash, () => oauthTokenByHash(deps.readModelDb, hash)),
    deps.catchUp,
    (token) => {
      if (!token || !hashesEqual(token.token_sha256, hash)) throw invalidToken('The access token is unknown.');
      if (token.revoked_at !== null) throw invalidToken('The access token was revoked with its OAuth client.');
      if (token.expires_at <= deps.clock.now()) throw invalidToken('The access token has expired; request a new one.');
      return {
        customerId: token.customer_id,
        credential: { kind: 'oauth_token', id: token.client_id },
        scopes: token.scopes,
        plan: token.plan,
        rateLimit: token.rate_limit,
        expiresAt: token.expires_at,
      };
    },
  );
}

/**
 * The live session of a token; throws the 401 for an unknown, ended or expired
 * one. Not cached: panel requests come at a person's pace, and a logout must
 * take effect at once.
 */
export function findSession(token: string, deps: Pick<AuthDeps, 'readModelDb' | 'catchUp' | 'clock'>): SessionRecord | Promise<SessionRecord> {
  const hash = sha256Hex(token);
  return lookup(
    () => sessionByHash(deps.readModelDb, hash),
    deps.catchUp,
    (session) => {
      if (!session || !hashesEqual(session.token_sha256, hash) || session.ended_at !== null || session.expires_at <= deps.clock.now()) {
        throw new ApiError(401, 'invalid_credentials', 'The session has ended or expired; log in again.', [], { 'WWW-Authenticate': `Bearer ${REALM}` });
      }
      return session;
    },
  );
}

/** 403 for a state-changing request whose X-CSRF-Token is not the one of its session. */
export function requireCsrf(request: FastifyRequest, token: string, csrfKey: Buffer): void {
  if (!STATE_CHANGING_METHODS.has(request.method) || csrfMatches(csrfKey, token, request.headers[CSRF_HEADER])) return;
  throw new ApiError(
    403,
    'csrf_failed',
    'A request that changes something with the session cookie must send the X-CSRF-Token header (the csrf_token of the session).',
  );
}

function authenticateSession(token: string, request: FastifyRequest, deps: AuthDeps): AuthContext | Promise<AuthContext> {
  const toContext = (session: SessionRecord): AuthContext => {
    requireCsrf(request, token, deps.csrfKey);
    return {
      customerId: session.customer.customer_id,
      credential: { kind: 'session', id: session.session_id },
      scopes: [...ALL_SCOPES],
      plan: session.customer.plan,
      rateLimit: session.rate_limit,
      expiresAt: session.expires_at,
    };
  };
  const found = findSession(token, deps);
  return found instanceof Promise ? found.then(toContext) : toContext(found);
}

/**
 * The credential of an Authorization header, else of the session cookie;
 * throws the 401 for a missing, malformed or unknown one.
 */
function authenticate(request: FastifyRequest, deps: AuthDeps, caches: Caches): AuthContext | Promise<AuthContext> {
  const header = request.headers.authorization;
  if (header === undefined) {
    const token = sessionTokenOf(request.headers.cookie);
    if (token !== null) return authenticateSession(token, request, deps);
  }
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match) {
    throw new ApiError(401, 'unauthenticated', 'Send an API key or access token as "Authorization: Bearer <credential>".', [], {
      'WWW-Authenticate': `Bearer ${REALM}`,
    });
  }
  const secret = match[1]!;
  if (secret.startsWith(API_KEY_PREFIX)) return authenticateApiKey(secret, deps, caches);
  if (secret.startsWith(OAUTH_TOKEN_PREFIX)) return authenticateOAuthToken(secret, deps, caches);
  throw invalidToken('The credential is not an API key or access token of this service.');
}

/** The hook that sets `request.auth`, or refuses with 401. */
export function authenticationHook(app: FastifyInstance, deps: AuthDeps): onRequestHookHandler {
  app.decorateRequest('auth', null);
  const caches: Caches = { keys: new CredentialCache(), tokens: new CredentialCache() };
  const stop = deps.onApplied((events) => {
    caches.keys.invalidateOn(events);
    caches.tokens.invalidateOn(events);
  });
  app.addHook('onClose', async () => stop());
  // A callback hook: a cached credential is checked without a promise per request.
  return (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    let outcome: AuthContext | Promise<AuthContext>;
    try {
      outcome = authenticate(request, deps, caches);
    } catch (err) {
      return done(err as Error);
    }
    if (outcome instanceof Promise) {
      outcome.then((auth) => {
        request.auth = auth;
        done();
      }, done);
      return;
    }
    request.auth = outcome;
    done();
  };
}

/** The hook that refuses with 403, naming the scope, a request whose credential has none of `needed`. Runs after the rate limiter. */
export function scopeCheckHook(needed: readonly Scope[]): onRequestHookHandler {
  const names = needed.join(' ');
  return (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    if (!request.auth) return done();
    if (needed.some((s) => hasScope(request.auth!.scopes, s))) return done();
    done(
      new ApiError(
        403,
        'insufficient_scope',
        needed.length === 1
          ? `This request needs the scope ${needed[0]}; the credential does not have it.`
          : `This request needs one of the scopes ${needed.join(', ')}; the credential has none of them.`,
        [],
        { 'WWW-Authenticate': `Bearer ${REALM}, error="insufficient_scope", scope="${names}"` },
      ),
    );
  };
}

/** The authenticated context of a route that declared a scope. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new ApiError(401, 'unauthenticated', 'Authentication required.');
  return request.auth;
}
