/** Customer and credential commands as given / when / then on the tenant stream. */
import { describe, expect, it } from 'vitest';
import { createApiKey, createOAuthClient, deleteOAuthClient, issueOAuthToken, revokeApiKey, type CredentialLookup } from '../../../core/commands/credentials.js';
import { createCustomer, setCustomerRateLimit, setCustomerWebhookLimit } from '../../../core/commands/customers.js';
import { emailStream } from '../../../core/commands/users.js';
import { sha256Hex } from '../../../core/credentials.js';
import { ALL_SCOPES, type DomainEvent } from '../../../core/events.js';
import { streams } from '../../../core/streams.js';
import { T0, given } from '../../support/given-when-then.js';

const TENANT = streams.tenant('cus_a');
const customerCreated: DomainEvent = { type: 'CustomerCreated', data: { customer_id: 'cus_a', name: 'Acme', plan: 'enterprise', speed_limit_kmh: null, created_at: T0 } };
const customer = { [TENANT]: [customerCreated] };

describe('createCustomer', () => {
  it('writes the customer and its full-access key in one append', async () => {
    const then = await given().when((store, clock) => createCustomer(store, clock, { name: 'Acme', plan: 'pro', speed_limit_kmh: 90 }));
    const { customer_id, key_id, api_key } = then.result!;
    expect(then.appended).toEqual({
      [streams.tenant(customer_id)]: [
        { type: 'CustomerCreated', data: { customer_id, name: 'Acme', plan: 'pro', speed_limit_kmh: 90, created_at: T0 } },
        { type: 'ApiKeyCreated', data: { customer_id, key_id, name: 'Default full-access key', scopes: [...ALL_SCOPES], secret_sha256: sha256Hex(api_key), created_at: T0 } },
      ],
    });
    expect(then.result!.user).toBeNull();
  });

  it('claims the first user\'s email first and writes the user last', async () => {
    const then = await given().when((store, clock) =>
      createCustomer(store, clock, { name: 'One', plan: 'pro', first_user: { email: 'Boss@One.example', name: ' Boss ', password: 'correct horse battery' } }),
    );
    const { customer_id, user } = then.result!;
    expect(user?.email).toBe('boss@one.example');
    expect(Object.keys(then.appended)).toEqual([emailStream('boss@one.example'), streams.tenant(customer_id), streams.user(user!.user_id)]);
    expect(then.appended[emailStream('boss@one.example')]).toEqual([
      { type: 'UserEmailClaimed', data: { user_id: user!.user_id, customer_id, email: 'boss@one.example', claimed_at: T0 } },
    ]);
    expect(then.appended[streams.user(user!.user_id)]).toEqual([
      {
        type: 'CustomerUserCreated',
        data: { user_id: user!.user_id, customer_id, email: 'boss@one.example', name: 'Boss', password_hash: expect.stringMatching(/^scrypt\$/), created_at: T0 },
      },
    ]);
  });

  it('writes nothing when the first user\'s email is taken', async () => {
    const then = await given({
      [emailStream('boss@one.example')]: [{ type: 'UserEmailClaimed', data: { user_id: 'usr_1', customer_id: 'cus_x', email: 'boss@one.example', claimed_at: T0 } }],
    }).when((store, clock) => createCustomer(store, clock, { name: 'Two', plan: 'pro', first_user: { email: 'boss@one.example', name: 'B', password: 'correct horse battery' } }));
    expect(then.refused()).toMatchObject({ kind: 'conflict', code: 'email_taken', field: '/email' });
    expect(then.appended).toEqual({});
  });
});

describe('customer limits', () => {
  it('sets an agreed rate limit, and clears it', async () => {
    for (const [limit, data] of [
      [{ per_minute: 6000, burst: 100 }, { per_minute: 6000, burst: 100 }],
      [null, { per_minute: null, burst: null }],
    ] as const) {
      const then = await given(customer).when((store, clock) => setCustomerRateLimit(store, clock, 'cus_a', limit));
      expect(then.appended).toEqual({ [TENANT]: [{ type: 'CustomerRateLimitSet', data: { customer_id: 'cus_a', ...data, set_at: T0 } }] });
    }
  });

  it('refuses a rate that is not whole requests, for any customer, before looking the customer up', async () => {
    for (const [history, limit] of [
      [customer, { per_minute: 0, burst: 10 }],
      [customer, { per_minute: 60, burst: 1.5 }],
      [{}, { per_minute: 60.5, burst: 10 }],
    ] as const) {
      const then = await given(history).when((store, clock) => setCustomerRateLimit(store, clock, 'cus_a', limit));
      expect(then.refused()).toMatchObject({ kind: 'invalid', code: 'validation_failed' });
      expect(then.appended).toEqual({});
    }
  });

  it('refuses a customer that was never created, also on a tenant stream holding other events', async () => {
    const keyOnly: DomainEvent = { type: 'ApiKeyCreated', data: { customer_id: 'cus_a', key_id: 'key_1', name: 'k', scopes: [], secret_sha256: 'x', created_at: T0 } };
    for (const history of [{}, { [TENANT]: [keyOnly] }]) {
      const then = await given(history).when((store, clock) => setCustomerRateLimit(store, clock, 'cus_a', { per_minute: 60, burst: 10 }));
      expect(then.refused()).toMatchObject({ kind: 'not_found', code: 'not_found' });
      expect(then.appended).toEqual({});
    }
  });

  it('sets and clears an agreed webhook rate; refuses one out of range or for no customer', async () => {
    const set = await given(customer).when((store, clock) => setCustomerWebhookLimit(store, clock, 'cus_a', 2500));
    expect(set.appended).toEqual({ [TENANT]: [{ type: 'CustomerWebhookLimitSet', data: { customer_id: 'cus_a', per_s: 2500, set_at: T0 } }] });
    const cleared = await given(customer).when((store, clock) => setCustomerWebhookLimit(store, clock, 'cus_a', null));
    expect(cleared.appended).toEqual({ [TENANT]: [{ type: 'CustomerWebhookLimitSet', data: { customer_id: 'cus_a', per_s: null, set_at: T0 } }] });
    for (const bad of [0, 1.5, 100_001]) {
      const then = await given(customer).when((store, clock) => setCustomerWebhookLimit(store, clock, 'cus_a', bad));
      expect(then.refused()).toMatchObject({ kind: 'invalid', code: 'validation_failed' });
      expect(then.appended).toEqual({});
    }
    expect((await given().when((store, clock) => setCustomerWebhookLimit(store, clock, 'cus_a', 10))).refused()).toMatchObject({ kind: 'not_found' });
  });
});

/** The credential read model, reduced to what the commands ask of it. */
function lookup(keys: Record<string, { revoked_at: number | null }>, clients: Record<string, { customer_id: string; deleted_at: number | null }> = {}): CredentialLookup {
  return { apiKey: (_customer, keyId) => keys[keyId] ?? null, oauthClient: (clientId) => clients[clientId] ?? null };
}

describe('API keys', () => {
  it('creates a key, storing only the digest of its secret', async () => {
    const then = await given(customer).when((store, clock) => createApiKey(store, clock, { customer_id: 'cus_a', name: 'ci', scopes: ['devices:read'] }));
    const { key_id, secret } = then.result!;
    expect(then.appended).toEqual({
      [TENANT]: [{ type: 'ApiKeyCreated', data: { customer_id: 'cus_a', key_id, name: 'ci', scopes: ['devices:read'], secret_sha256: sha256Hex(secret), created_at: T0 } }],
    });
  });

  it('revokes a live key; a revoked one changes nothing; an unknown one is not found', async () => {
    const revoke = (keys: CredentialLookup) => given(customer).when((store, clock) => revokeApiKey(store, clock, keys, { customer_id: 'cus_a', key_id: 'key_1' }));
    const live = await revoke(lookup({ key_1: { revoked_at: null } }));
    expect(live.appended).toEqual({ [TENANT]: [{ type: 'ApiKeyRevoked', data: { customer_id: 'cus_a', key_id: 'key_1', revoked_at: T0 } }] });
    const again = await revoke(lookup({ key_1: { revoked_at: T0 } }));
    expect(again.result).toBeNull();
    expect(again.appended).toEqual({});
    const unknown = await revoke(lookup({}));
    expect(unknown.refused()).toMatchObject({ kind: 'not_found', code: 'not_found' });
    expect(unknown.appended).toEqual({});
  });
});

describe('OAuth clients and tokens', () => {
  it('creates a client, storing only the digest of its secret', async () => {
    const then = await given(customer).when((store, clock) => createOAuthClient(store, clock, { customer_id: 'cus_a', name: 'tms', scopes: ['positions:read'] }));
    const { client, client_secret } = then.result!;
    expect(client).toEqual({ customer_id: 'cus_a', client_id: expect.stringMatching(/^cli_/), name: 'tms', scopes: ['positions:read'], secret_sha256: sha256Hex(client_secret), created_at: T0 });
    expect(then.appended).toEqual({ [TENANT]: [{ type: 'OAuthClientCreated', data: client }] });
  });

  it("deletes a live client; another customer's or a deleted one is not found", async () => {
    const del = (clients: Parameters<typeof lookup>[1]) =>
      given(customer).when((store, clock) => deleteOAuthClient(store, clock, lookup({}, clients), { customer_id: 'cus_a', client_id: 'cli_1' }));
    const live = await del({ cli_1: { customer_id: 'cus_a', deleted_at: null } });
    expect(live.appended).toEqual({ [TENANT]: [{ type: 'OAuthClientDeleted', data: { customer_id: 'cus_a', client_id: 'cli_1', deleted_at: T0 } }] });
    const gone: Array<Parameters<typeof lookup>[1]> = [{ cli_1: { customer_id: 'cus_b', deleted_at: null } }, { cli_1: { customer_id: 'cus_a', deleted_at: T0 } }, {}];
    for (const clients of gone) {
      const then = await del(clients);
      expect(then.refused()).toMatchObject({ kind: 'not_found', code: 'not_found' });
      expect(then.appended).toEqual({});
    }
  });

  it('issues a token for its time to live, storing its digest', async () => {
    const then = await given(customer).when((store, clock) => issueOAuthToken(store, clock, { customer_id: 'cus_a', client_id: 'cli_1', scopes: ['events:read'], ttl_s: 3600 }));
    expect(then.appended).toEqual({
      [TENANT]: [
        {
          type: 'OAuthTokenIssued',
          data: { customer_id: 'cus_a', client_id: 'cli_1', token_sha256: sha256Hex(then.result!.token), scopes: ['events:read'], issued_at: T0, expires_at: T0 + 3_600_000 },
        },
      ],
    });
  });

  it('issues a burst of tokens at once without conflicts: decisions on a tenant only expect it to exist', async () => {
    const then = await given(customer).when((store, clock) =>
      Promise.all(Array.from({ length: 25 }, () => issueOAuthToken(store, clock, { customer_id: 'cus_a', client_id: 'cli_1', scopes: [], ttl_s: 60 }))),
    );
    expect(then.appended[TENANT]!.map((e) => e.type)).toEqual(Array(25).fill('OAuthTokenIssued'));
  });
});
