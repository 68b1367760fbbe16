/**
 * Queries over the credential read models (API keys, OAuth clients and
 * tokens; tables of projections/tenants). Tenant-scoped except the two
 * lookups that establish the tenant: a token by hash, a client by id.
 */
import type Database from 'better-sqlite3';
import type { Plan, Scope } from '../core/events.js';
import type { RateLimit } from './context.js';

export interface ApiKeyRecord {
  key_id: string;
  name: string;
  scopes: Scope[];
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
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

/** The agreed-limit columns of a credential lookup (LEFT JOIN customer_rate_limits), as one value built once per lookup. */
export function withRateLimit<T extends { rate_per_minute: number | null; rate_burst: number | null }>(
  row: T,
): Omit<T, 'rate_per_minute' | 'rate_burst'> & { rate_limit: RateLimit | null } {
  const { rate_per_minute, rate_burst, ...rest } = row;
  return { ...rest, rate_limit: rate_per_minute === null || rate_burst === null ? null : { perMinute: rate_per_minute, burst: rate_burst } };
}

type WithJsonScopes<T> = Omit<T, 'scopes'> & { scopes: string };

function parseScopes<T extends { scopes: Scope[] }>(row: WithJsonScopes<T> | undefined): T | null {
  return row ? ({ ...row, scopes: JSON.parse(row.scopes) as Scope[] } as unknown as T) : null;
}

export class CredentialQueries {
  private readonly q: Record<'keys' | 'key' | 'client' | 'clients' | 'token', Database.Statement>;

  constructor(db: Database.Database) {
    const keyColumns = `k.key_id, k.name, k.scopes, k.created_at, k.revoked_at, u.last_used_at
      FROM api_keys k LEFT JOIN api_key_usage u ON u.key_id = k.key_id`;
    this.q = {
      keys: db.prepare(`SELECT ${keyColumns} WHERE k.customer_id = ? AND k.key_id > ? ORDER BY k.key_id LIMIT ?`),
      key: db.prepare(`SELECT ${keyColumns} WHERE k.customer_id = ? AND k.key_id = ?`),
      client: db.prepare('SELECT * FROM oauth_clients WHERE client_id = ?'),
      clients: db.prepare(
        `SELECT * FROM oauth_clients WHERE customer_id = ? AND deleted_at IS NULL AND client_id > ?
         ORDER BY client_id LIMIT ?`,
      ),
      // A token dies with its client even if the projection has not marked it yet.
      token: db.prepare(
        `SELECT t.token_sha256, t.client_id, t.customer_id, t.scopes, t.expires_at,
                coalesce(t.revoked_at, c.deleted_at) AS revoked_at, cu.plan,
                r.per_minute AS rate_per_minute, r.burst AS rate_burst
         FROM oauth_tokens t JOIN oauth_clients c ON c.client_id = t.client_id
         JOIN customers cu ON cu.customer_id = t.customer_id
         LEFT JOIN customer_rate_limits r ON r.customer_id = t.customer_id
         WHERE t.token_sha256 = ?`,
      ),
    };
  }

  /** One page of a tenant's keys (revoked ones included) in id order, strictly after `afterId`. */
  apiKeys(customerId: string, afterId: string | null, limit: number): ApiKeyRecord[] {
    return (this.q.keys.all(customerId, afterId ?? '', limit) as WithJsonScopes<ApiKeyRecord>[]).map(
      (r) => parseScopes<ApiKeyRecord>(r)!,
    );
  }

  apiKey(customerId: string, keyId: string): ApiKeyRecord | null {
    return parseScopes<ApiKeyRecord>(this.q.key.get(customerId, keyId) as WithJsonScopes<ApiKeyRecord> | undefined);
  }

  /** Any tenant's client (the token endpoint learns the tenant from it); deleted ones included. */
  oauthClient(clientId: string): OAuthClientRecord | null {
    return parseScopes<OAuthClientRecord>(this.q.client.get(clientId) as WithJsonScopes<OAuthClientRecord> | undefined);
  }

  /** One page of a tenant's live clients in id order, strictly after `afterId`. */
  oauthClients(customerId: string, afterId: string | null, limit: number): OAuthClientRecord[] {
    return (this.q.clients.all(customerId, afterId ?? '', limit) as WithJsonScopes<OAuthClientRecord>[]).map(
      (r) => parseScopes<OAuthClientRecord>(r)!,
    );
  }

  oauthTokenByHash(hash: string): OAuthTokenRecord | null {
    type Row = WithJsonScopes<Omit<OAuthTokenRecord, 'rate_limit'>> & { rate_per_minute: number | null; rate_burst: number | null };
    const row = this.q.token.get(hash) as Row | undefined;
    return row ? parseScopes<OAuthTokenRecord>(withRateLimit(row)) : null;
  }
}
