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
 */
import type Database from 'better-sqlite3';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Clock } from '../../core/clock.js';
import { API_KEY_PREFIX, OAUTH_TOKEN_PREFIX, hashesEqual, sha256Hex } from '../../core/credentials.js';
import type { Plan, Scope } from '../../core/events.js';
import type { ProjectionsView, RateLimit } from '../context.js';
import { CredentialCache } from '../credential-cache.js';
import type { KeyUsageRecorder } from '../key-usage.js';
import { ApiError } from '../problem.js';
import { apiKeyByHash, oauthTokenByHash, type ApiKeyRecord, type OAuthTokenRecord } from '../queries/credentials.js';

export interface AuthContext {
  customerId: string;
  /** Which credential: an API key (`key_…`) or an OAuth token of a client (`cli_…`). */
  credential: { kind: 'api_key' | 'oauth_token'; id: string };
  scopes: Scope[];
  plan: Plan;
  /** The customer's agreed rate limit; null: its plan's. */
  rateLimit: RateLimit | null;
  /** When the credential stops working (an OAuth token's expiry); null for API keys, which live until revoked. */
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
function lookup<T>(
  find: () => T | null,
  catchUp: () => Promise<void>,
  toContext: (found: T | null) => AuthContext,
): AuthContext | Promise<AuthContext> {
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

/** The credential of an Authorization header; throws the 401 for a missing, malformed or unknown one. */
function authenticate(header: string | undefined, deps: AuthDeps, caches: Caches): AuthContext | Promise<AuthContext> {
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
      outcome = authenticate(request.headers.authorization, deps, caches);
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
