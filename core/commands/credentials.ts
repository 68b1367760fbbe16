/**
 * Credential commands on a customer's tenant stream: API keys and OAuth
 * clients (secrets shown once, only their SHA-256 stored) and OAuth tokens.
 * Whether a key or client exists is read through `CredentialLookup` (the
 * API's credential read model): the tenant stream is long, and these facts
 * are already indexed there. The lookup's answer comes into each decision as
 * a fact, and so do the secrets' digests, drawn before it.
 */
import type { Clock } from '../clock.js';
import { API_KEY_PREFIX, OAUTH_CLIENT_SECRET_PREFIX, OAUTH_TOKEN_PREFIX, generateSecret, sha256Hex } from '../credentials.js';
import type { ApiKeyCreated, OAuthClientCreated, OAuthTokenIssued, Scope } from '../events.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { newId, randomUuid } from '../ids.js';
import { streams } from '../streams.js';
import { type NewEvent, handle } from './handler.js';
import { CommandRejected } from './rejection.js';
import { type TenantState, tenantStream } from './tenant.js';

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

/** Appends to the tenant stream whatever `decide` says, the customer's existence aside (keys are checked by the lookup). */
function onTenant(store: EventStore, customerId: string, decide: (state: TenantState) => NewEvent[]) {
  return handle(store, { stream: streams.tenant(customerId), aggregate: tenantStream, decide });
}

export function decideCreateApiKey(_state: TenantState, key: ApiKeyCreated['data']): NewEvent[] {
  return [{ type: 'ApiKeyCreated', data: key }];
}

export async function createApiKey(
  store: EventStore,
  clock: Clock,
  input: { customer_id: string; name: string; scopes: Scope[] },
): Promise<{ key_id: string; secret: string; position: LogPosition }> {
  const key = newApiKeyEvent(input.customer_id, input.name, input.scopes, clock.now());
  const { position } = await onTenant(store, input.customer_id, (state) => decideCreateApiKey(state, key.event.data));
  return { key_id: key.keyId, secret: key.secret, position: position! };
}

/** Revoking a revoked key changes nothing. */
export function decideRevokeApiKey(
  _state: TenantState,
  command: { customer_id: string; key_id: string; key: { revoked_at: number | null } | null },
  now: number,
): NewEvent[] {
  if (!command.key) throw new CommandRejected('not_found', 'not_found', `API key ${command.key_id} does not exist`);
  if (command.key.revoked_at !== null) return [];
  return [{ type: 'ApiKeyRevoked', data: { customer_id: command.customer_id, key_id: command.key_id, revoked_at: now } }];
}

/** Revokes a key; revoking a revoked key returns null. */
export async function revokeApiKey(
  store: EventStore,
  clock: Clock,
  keys: CredentialLookup,
  input: { customer_id: string; key_id: string },
): Promise<LogPosition | null> {
  const command = { ...input, key: keys.apiKey(input.customer_id, input.key_id) };
  const now = clock.now();
  return (await onTenant(store, input.customer_id, (state) => decideRevokeApiKey(state, command, now))).position;
}

export function decideCreateOAuthClient(_state: TenantState, client: OAuthClientCreated['data']): NewEvent[] {
  return [{ type: 'OAuthClientCreated', data: client }];
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
  const { position } = await onTenant(store, input.customer_id, (state) => decideCreateOAuthClient(state, client));
  return { client, client_secret: secret, position: position! };
}

/** Another tenant's or a deleted client is not found. */
export function decideDeleteOAuthClient(
  _state: TenantState,
  command: { customer_id: string; client_id: string; client: { customer_id: string; deleted_at: number | null } | null },
  now: number,
): NewEvent[] {
  const { client } = command;
  if (!client || client.customer_id !== command.customer_id || client.deleted_at !== null) {
    throw new CommandRejected('not_found', 'not_found', `OAuth client ${command.client_id} does not exist`);
  }
  return [{ type: 'OAuthClientDeleted', data: { customer_id: command.customer_id, client_id: command.client_id, deleted_at: now } }];
}

/** Deletes a client; its tokens stop working with it. */
export async function deleteOAuthClient(
  store: EventStore,
  clock: Clock,
  clients: CredentialLookup,
  input: { customer_id: string; client_id: string },
): Promise<LogPosition> {
  const command = { ...input, client: clients.oauthClient(input.client_id) };
  const now = clock.now();
  return (await onTenant(store, input.customer_id, (state) => decideDeleteOAuthClient(state, command, now))).position!;
}

export function decideIssueOAuthToken(
  _state: TenantState,
  command: Omit<OAuthTokenIssued['data'], 'issued_at' | 'expires_at'> & { ttl_s: number },
  now: number,
): NewEvent[] {
  const { ttl_s, ...token } = command;
  return [{ type: 'OAuthTokenIssued', data: { ...token, issued_at: now, expires_at: now + ttl_s * 1000 } }];
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
  const command = { customer_id: input.customer_id, client_id: input.client_id, token_sha256: sha256Hex(token), scopes: input.scopes, ttl_s: input.ttl_s };
  const { position } = await onTenant(store, input.customer_id, (state) => decideIssueOAuthToken(state, command, now));
  return { token, position: position! };
}
