import { describe, expect, it } from 'vitest';
import { createApiKey, createOAuthClient, deleteOAuthClient, issueOAuthToken, revokeApiKey, type CredentialLookup } from '../../../core/commands/credentials.js';
import { sha256Hex } from '../../../core/credentials.js';
import { streams } from '../../../core/streams.js';
import { rejection, useCommandStore } from '../../support/command-store.js';

const open = useCommandStore();

/** The credential read model, reduced to what the commands ask of it. */
function lookup(keys: Record<string, { revoked_at: number | null }>, clients: Record<string, { customer_id: string; deleted_at: number | null }>): CredentialLookup {
  return { apiKey: (_customer, keyId) => keys[keyId] ?? null, oauthClient: (clientId) => clients[clientId] ?? null };
}

describe('credential commands', () => {
  it('creates an API key storing only the hash of its secret, and revokes it once', async () => {
    const { store, clock } = open();
    const key = await createApiKey(store, clock, { customer_id: 'cus_a', name: 'ci', scopes: ['devices:read'] });
    expect(key.secret).toMatch(/^fleet_key_/);
    expect((await store.readStream(streams.tenant('cus_a')))[0]).toMatchObject({ type: 'ApiKeyCreated', data: { secret_sha256: sha256Hex(key.secret) } });
    expect(await revokeApiKey(store, clock, lookup({ [key.key_id]: { revoked_at: null } }, {}), { customer_id: 'cus_a', key_id: key.key_id })).not.toBeNull();
    expect(await revokeApiKey(store, clock, lookup({ [key.key_id]: { revoked_at: 1 } }, {}), { customer_id: 'cus_a', key_id: key.key_id })).toBeNull();
    expect(await rejection(revokeApiKey(store, clock, lookup({}, {}), { customer_id: 'cus_a', key_id: 'key_nope' }))).toMatchObject({ kind: 'not_found' });
  });

  it("creates and deletes an OAuth client; another customer's or a deleted one is not found", async () => {
    const { store, clock } = open();
    const { client, client_secret } = await createOAuthClient(store, clock, { customer_id: 'cus_a', name: 'tms', scopes: ['positions:read'] });
    expect(client.secret_sha256).toBe(sha256Hex(client_secret));
    const live = lookup({}, { [client.client_id]: { customer_id: 'cus_a', deleted_at: null } });
    expect(await rejection(deleteOAuthClient(store, clock, live, { customer_id: 'cus_b', client_id: client.client_id }))).toMatchObject({ kind: 'not_found' });
    await deleteOAuthClient(store, clock, live, { customer_id: 'cus_a', client_id: client.client_id });
    const gone = lookup({}, { [client.client_id]: { customer_id: 'cus_a', deleted_at: clock.now() } });
    expect(await rejection(deleteOAuthClient(store, clock, gone, { customer_id: 'cus_a', client_id: client.client_id }))).toMatchObject({ kind: 'not_found' });
  });

  it('issues a token valid for its time to live, stored as a hash', async () => {
    const { store, clock } = open();
    const { token } = await issueOAuthToken(store, clock, { customer_id: 'cus_a', client_id: 'cli_1', scopes: ['events:read'], ttl_s: 3600 });
    const [issued] = await store.readStream(streams.tenant('cus_a'));
    expect(issued).toMatchObject({ type: 'OAuthTokenIssued', data: { token_sha256: sha256Hex(token), issued_at: clock.now(), expires_at: clock.now() + 3_600_000 } });
  });
});
