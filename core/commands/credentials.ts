/**
 * Credential commands on a customer's tenant stream: API keys and OAuth
 * clients (secrets shown once, only their SHA-256 stored) and OAuth tokens.
 * Whether a key or client exists is read through `CredentialLookup` (the
 * API's credential read model): the tenant stream is long, and these facts
 * are already indexed there.
 */
import type { Clock } from '../clock.js';
import { API_KEY_PREFIX, OAUTH_CLIENT_SECRET_PREFIX, OAUTH_TOKEN_PREFIX, generateSecret, sha256Hex } from '../credentials.js';
import type { ApiKeyCreated, OAuthClientCreated, Scope } from '../events.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { newId, randomUuid } from '../ids.js';
import { streams } from '../streams.js';
import { CommandRejected } from './rejection.js';

export interface CredentialLookup {
  apiKey(customerId: string, keyId: string): { revoked_at: number | null } | null;
  oauthClient(clientId: string): { customer_id: string; deleted_at: number | null } | null;
}

/** A new key's event and its secret, which exists only in the caller's hands from here on. */
export function newApiKeyEvent(customerId: string, name: string, scopes: Scope[], now: number) {
  const secret = generateSecret(API_KEY_PREFIX);
  const keyId = newId('key', now);
  const data: ApiKeyCreated['data'] = { customer_id: customerId, key_id: keyId, name, scopes, secret_sha256: sha256Hex(secret), created_at: now };
  return { secret, keyId, event: { id: randomUuid(), type: 'ApiKeyCreated' as const, data } };
}

export async function createApiKey(
  store: EventStore,
  clock: Clock,
  input: { customer_id: string; name: string; scopes: Scope[] },
): Promise<{ key_id: string; secret: string; position: LogPosition }> {
  const key = newApiKeyEvent(input.customer_id, input.name, input.scopes, clock.now());
  const result = await store.appendToStream(streams.tenant(input.customer_id), [key.event]);
  return { key_id: key.keyId, secret: key.secret, position: result.position };
}

/** Revokes a key; revoking a revoked key changes nothing and returns null. */
export async function revokeApiKey(
  store: EventStore,
  clock: Clock,
  keys: CredentialLookup,
  input: { customer_id: string; key_id: string },
): Promise<LogPosition | null> {
  const key = keys.apiKey(input.customer_id, input.key_id);
  if (!key) throw new CommandRejected('not_found', 'not_found', `API key ${input.key_id} does not exist`);
  if (key.revoked_at !== null) return null;
  const result = await store.appendToStream(streams.tenant(input.customer_id), [
    { id: randomUuid(), type: 'ApiKeyRevoked', data: { customer_id: input.customer_id, key_id: input.key_id, revoked_at: clock.now() } },
  ]);
  return result.position;
}

export async function createOAuthClient(
  store: EventStore,
  clock: Clock,
  input: { customer_id: string; name: string; scopes: Scope[] },
): Promise<{ client: OAuthClientCreated['data']; client_secret: string; position: LogPosition }> {
  const now = clock.now();
  const secret = generateSecret(OAUTH_CLIENT_SECRET_PREFIX);
  const client: OAuthClientCreated['data'] = {
    customer_id: input.customer_id,
    client_id: newId('cli', now),
    name: input.name,
    scopes: input.scopes,
    secret_sha256: sha256Hex(secret),
    created_at: now,
  };
  const result = await store.appendToStream(streams.tenant(input.customer_id), [{ id: randomUuid(), type: 'OAuthClientCreated', data: client }]);
  return { client, client_secret: secret, position: result.position };
}

/** Deletes a client; its tokens stop working with it. Another tenant's or a deleted client is not found. */
export async function deleteOAuthClient(
  store: EventStore,
  clock: Clock,
  clients: CredentialLookup,
  input: { customer_id: string; client_id: string },
): Promise<LogPosition> {
  const client = clients.oauthClient(input.client_id);
  if (!client || client.customer_id !== input.customer_id || client.deleted_at !== null) {
    throw new CommandRejected('not_found', 'not_found', `OAuth client ${input.client_id} does not exist`);
  }
  const result = await store.appendToStream(streams.tenant(input.customer_id), [
    { id: randomUuid(), type: 'OAuthClientDeleted', data: { customer_id: input.customer_id, client_id: input.client_id, deleted_at: clock.now() } },
  ]);
  return result.position;
}

/**
 * Issues an access token to a client the caller has authenticated: one event
 * per token, so the caller bounds how often (the token endpoint's per-client
 * bucket, api/oauth-token.ts).
 */
export async function issueOAuthToken(
  store: EventStore,
  clock: Clock,
  input: { customer_id: string; client_id: string; scopes: Scope[]; ttl_s: number },
): Promise<{ token: string; position: LogPosition }> {
  const now = clock.now();
  const token = generateSecret(OAUTH_TOKEN_PREFIX);
  const result = await store.appendToStream(streams.tenant(input.customer_id), [
    {
      id: randomUuid(),
      type: 'OAuthTokenIssued',
      data: {
        customer_id: input.customer_id,
        client_id: input.client_id,
        token_sha256: sha256Hex(token),
        scopes: input.scopes,
        issued_at: now,
        expires_at: now + input.ttl_s * 1000,
      },
    },
  ]);
  return { token, position: result.position };
}
