/**
 * Credential queries (API keys, OAuth clients and tokens; tables of
 * projections/tenants). Tenant-scoped except the lookups that establish the
 * tenant: a key or token by its hash, a client by its id.
 */
import type Database from 'better-sqlite3';
import type { CredentialLookup } from '../../core/commands/credentials.js';
import type { Plan, Scope } from '../../core/events.js';
import type { RateLimit } from '../context.js';
import { stmt } from './statements.js';
import { boundLimit } from '../../core/sqlite-limit.js';

/** An API key as the API knows it: what authenticates a request and what the key list shows. */
export interface ApiKeyRecord {
  key_id: string;
  customer_id: string;
  name: string;
  scopes: Scope[];
  secret_sha256: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
  plan: Plan;
  /** The customer's agreed rate limit (CustomerRateLimitSet); null: its plan's. */
  rate_limit: RateLimit | null;
}

export interface OAuthClientRecord {
  client_id: string;
  customer_id: string;
  name: string;
  scopes: Scope[];
  secret_sha256: string;
  created_at: number;
  deleted_at: number | null;
}

export interface OAuthTokenRecord {
  token_sha256: string;
  client_id: string;
  customer_id: string;
  scopes: Scope[];
  expires_at: number;
  revoked_at: number | null;
  plan: Plan;
  /** The customer's agreed rate limit (CustomerRateLimitSet); null: its plan's. */
  rate_limit: RateLimit | null;
}

interface RateLimitColumns {
  rate_per_minute: number | null;
  rate_burst: number | null;
}
type Stored<T> = Omit<T, 'scopes' | 'rate_limit'> & { scopes: string } & Partial<RateLimitColumns>;

/** JSON scopes parsed, and the agreed-limit columns (LEFT JOIN customer_rate_limits) as one value. */
function fromStored<T>(row: Stored<T> | undefined): T | null {
  if (!row) return null;
  const { rate_per_minute, rate_burst, ...rest } = row;
  const parsed: Record<string, unknown> = { ...rest, scopes: JSON.parse(row.scopes) as Scope[] };
  if (rate_per_minute !== undefined) {
    parsed.rate_limit = rate_per_minute === null || rate_burst === null || rate_burst === undefined ? null : { perMinute: rate_per_minute, burst: rate_burst };
  }
  return parsed as T;
}

const KEYS = `SELECT k.key_id, k.customer_id, k.name, k.scopes, k.secret_sha256, k.created_at, k.revoked_at, u.last_used_at,
    c.plan, r.per_minute AS rate_per_minute, r.burst AS rate_burst
  FROM api_keys k JOIN customers c ON c.customer_id = k.customer_id
  LEFT JOIN api_key_usage u ON u.key_id = k.key_id
  LEFT JOIN customer_rate_limits r ON r.customer_id = k.customer_id`;

export function apiKeyByHash(db: Database.Database, hash: string): ApiKeyRecord | null {
  return fromStored<ApiKeyRecord>(stmt(db, `${KEYS} WHERE k.secret_sha256 = ?`).get(hash) as Stored<ApiKeyRecord> | undefined);
}

export function apiKeyById(db: Database.Database, customerId: string, keyId: string): ApiKeyRecord | null {
  return fromStored<ApiKeyRecord>(stmt(db, `${KEYS} WHERE k.customer_id = ? AND k.key_id = ?`).get(customerId, keyId) as Stored<ApiKeyRecord> | undefined);
}

/** One page of a tenant's keys (revoked ones included) in id order, strictly after `afterId`. */
export function apiKeyPage(db: Database.Database, customerId: string, afterId: string | null, limit: number): ApiKeyRecord[] {
  const rows = stmt(db, `${KEYS} WHERE k.customer_id = ? AND k.key_id > ? ORDER BY k.key_id LIMIT ${boundLimit()}`).all(customerId, afterId ?? '', limit);
  return (rows as Stored<ApiKeyRecord>[]).map((r) => fromStored<ApiKeyRecord>(r)!);
}

/** Any tenant's client (the token endpoint learns the tenant from it); deleted ones included. */
export function oauthClientById(db: Database.Database, clientId: string): OAuthClientRecord | null {
  return fromStored<OAuthClientRecord>(stmt(db, 'SELECT * FROM oauth_clients WHERE client_id = ?').get(clientId) as Stored<OAuthClientRecord> | undefined);
}

/** One page of a tenant's live clients in id order, strictly after `afterId`. */
export function oauthClientPage(db: Database.Database, customerId: string, afterId: string | null, limit: number): OAuthClientRecord[] {
  const rows = stmt(db, `SELECT * FROM oauth_clients WHERE customer_id = ? AND deleted_at IS NULL AND client_id > ? ORDER BY client_id LIMIT ${boundLimit()}`).all(
    customerId,
    afterId ?? '',
    limit,
  );
  return (rows as Stored<OAuthClientRecord>[]).map((r) => fromStored<OAuthClientRecord>(r)!);
}

/** A token dies with its client even if the projection has not marked it yet. */
export function oauthTokenByHash(db: Database.Database, hash: string): OAuthTokenRecord | null {
  const row = stmt(
    db,
    `SELECT t.token_sha256, t.client_id, t.customer_id, t.scopes, t.expires_at,
            coalesce(t.revoked_at, c.deleted_at) AS revoked_at, cu.plan,
            r.per_minute AS rate_per_minute, r.burst AS rate_burst
     FROM oauth_tokens t JOIN oauth_clients c ON c.client_id = t.client_id
     JOIN customers cu ON cu.customer_id = t.customer_id
     LEFT JOIN customer_rate_limits r ON r.customer_id = t.customer_id
     WHERE t.token_sha256 = ?`,
  ).get(hash);
  return fromStored<OAuthTokenRecord>(row as Stored<OAuthTokenRecord> | undefined);
}

/** What the credential commands ask of the read model. */
export function credentialLookup(db: Database.Database): CredentialLookup {
  return { apiKey: (customerId, keyId) => apiKeyById(db, customerId, keyId), oauthClient: (clientId) => oauthClientById(db, clientId) };
}
