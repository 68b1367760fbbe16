/**
 * Bearer authentication with API keys, and scope checks. Only SHA-256 hashes
 * are stored; the lookup is by hash and the final comparison constant-time.
 * A route names the scope it needs in `config.scope`; write implies read.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hashesEqual, sha256Hex } from '../../core/credentials.js';
import type { Plan, Scope } from '../../core/events.js';
import { ApiError } from '../problem.js';
import type { ReadModels } from '../read-models.js';

export interface AuthContext {
  customerId: string;
  keyId: string;
  scopes: Scope[];
  plan: Plan;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyContextConfig {
    /** The scope a route requires; absent means the route is public. */
    scope?: Scope;
  }
}

const UNAUTHORIZED_HEADERS = { 'WWW-Authenticate': 'Bearer realm="fleet"' };

export function hasScope(granted: readonly Scope[], needed: Scope): boolean {
  if (granted.includes(needed)) return true;
  if (needed.endsWith(':read')) return granted.includes(needed.replace(':read', ':write') as Scope);
  return false;
}

export function registerAuth(
  app: FastifyInstance,
  readModels: ReadModels,
  /** Brings the read models up to date; tried once before refusing a key we do not know yet. */
  catchUp: () => Promise<void>,
): void {
  app.decorateRequest('auth', null);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const needed = request.routeOptions.config?.scope;
    if (!needed) return;
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      throw new ApiError(401, 'unauthenticated', 'Send an API key as "Authorization: Bearer <key>".', [], UNAUTHORIZED_HEADERS);
    }
    const hash = sha256Hex(match[1]!);
    let key = readModels.apiKeyByHash(hash);
    if (!key) {
      await catchUp();
      key = readModels.apiKeyByHash(hash);
    }
    if (!key || !hashesEqual(key.secret_sha256, hash) || key.revoked_at !== null) {
      throw new ApiError(401, 'invalid_credentials', 'The API key is unknown or revoked.', [], UNAUTHORIZED_HEADERS);
    }
    if (!hasScope(key.scopes, needed)) {
      throw new ApiError(403, 'insufficient_scope', `This request needs the scope ${needed}; the key does not have it.`);
    }
    request.auth = { customerId: key.customer_id, keyId: key.key_id, scopes: key.scopes, plan: key.plan };
  });
}

/** The authenticated context of a route that declared a scope. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new ApiError(401, 'unauthenticated', 'Authentication required.');
  return request.auth;
}
