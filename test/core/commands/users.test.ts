import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { STALE_CLAIM_MS } from '../../../core/commands/claims.js';
import { createCustomer } from '../../../core/commands/customers.js';
import { SESSION_TTL_MS, createUser, endSession, startSession } from '../../../core/commands/users.js';
import { sha256Hex } from '../../../core/credentials.js';
import { verifyPassword } from '../../../core/passwords.js';
import { streams } from '../../../core/streams.js';
import { T0, rejection, useCommandStore } from '../../support/command-store.js';

const open = useCommandStore();
const PASSWORD = 'correct horse battery';

async function customer(store: Parameters<typeof createCustomer>[0], clock: Parameters<typeof createCustomer>[1]): Promise<string> {
  return (await createCustomer(store, clock, { name: 'Acme', plan: 'pro' })).customer_id;
}

describe('createUser', () => {
  it('stores the lowercased email and an scrypt hash with its parameters, never the password', async () => {
    const { store, clock } = open();
    const customerId = await customer(store, clock);
    const { user_id, email } = await createUser(store, clock, { customer_id: customerId, email: ' Ann@Example.COM ', name: 'Ann', password: PASSWORD });
    expect(email).toBe('ann@example.com');
    const [created] = await store.readStream(streams.user(user_id));
    expect(created).toMatchObject({ type: 'CustomerUserCreated', data: { customer_id: customerId, email: 'ann@example.com', name: 'Ann' } });
    const hash = (created!.data as { password_hash: string }).password_hash;
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(JSON.stringify(created!.data)).not.toContain(PASSWORD);
    expect(await verifyPassword(PASSWORD, hash)).toBe(true);
    expect(await verifyPassword(`${PASSWORD}!`, hash)).toBe(false);
  });

  it('keeps an email unique across customers, also when creations race', async () => {
    const { store, clock } = open();
    const a = await customer(store, clock);
    const b = await customer(store, clock);
    const results = await Promise.allSettled(
      [a, b, a, b].map((c, i) => createUser(store, clock, { customer_id: c, email: i % 2 ? 'ops@fleet.example' : 'OPS@fleet.example', name: 'Ops', password: PASSWORD })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const err = await rejection(createUser(store, clock, { customer_id: b, email: 'ops@fleet.example', name: 'Again', password: PASSWORD }));
    expect(err).toMatchObject({ kind: 'conflict', code: 'email_taken', field: '/email' });
  });

  it('refuses an unknown customer, a malformed email and a short password', async () => {
    const { store, clock } = open();
    const customerId = await customer(store, clock);
    expect(await rejection(createUser(store, clock, { customer_id: 'cus_nope', email: 'a@b.example', name: 'A', password: PASSWORD }))).toMatchObject({
      kind: 'not_found',
    });
    expect(await rejection(createUser(store, clock, { customer_id: customerId, email: 'not an email', name: 'A', password: PASSWORD }))).toMatchObject({
      kind: 'invalid',
      field: '/email',
    });
    expect(await rejection(createUser(store, clock, { customer_id: customerId, email: 'a@b.example', name: 'A', password: 'short' }))).toMatchObject({
      kind: 'invalid',
      field: '/password',
    });
  });

  it('createCustomer with a first user refuses a taken email before writing the customer', async () => {
    const { store, clock } = open();
    const first = await createCustomer(store, clock, { name: 'One', plan: 'pro', first_user: { email: 'boss@one.example', name: 'Boss', password: PASSWORD } });
    expect(first.user?.email).toBe('boss@one.example');
    const before = (await store.readAll({ maxCount: 1000 })).length;
    const err = await rejection(
      createCustomer(store, clock, { name: 'Two', plan: 'pro', first_user: { email: 'Boss@one.example', name: 'Boss', password: PASSWORD } }),
    );
    expect(err.code).toBe('email_taken');
    expect((await store.readAll({ maxCount: 1000 })).length).toBe(before);
  });

  it('takes over an email claim whose user was never written', async () => {
    const { store, clock } = open();
    const customerId = await customer(store, clock);
    const digest = createHash('sha256').update('late@fleet.example').digest('hex').slice(0, 32);
    await store.appendToStream(streams.userEmail(digest), [
      { id: crypto.randomUUID(), type: 'UserEmailClaimed', data: { user_id: 'usr_ghost', customer_id: customerId, email: 'late@fleet.example', claimed_at: T0 } },
    ]);
    expect((await rejection(createUser(store, clock, { customer_id: customerId, email: 'late@fleet.example', name: 'L', password: PASSWORD }))).code).toBe(
      'email_taken',
    );
    clock.advance(STALE_CLAIM_MS + 1);
    await createUser(store, clock, { customer_id: customerId, email: 'late@fleet.example', name: 'L', password: PASSWORD });
  });
});

describe('startSession / endSession', () => {
  it('logs in with the right password (any email case), keeping only the token hash, for 12 hours', async () => {
    const { store, clock } = open();
    const customerId = await customer(store, clock);
    const { user_id } = await createUser(store, clock, { customer_id: customerId, email: 'ann@example.com', name: 'Ann', password: PASSWORD });
    const started = await startSession(store, clock, { email: 'ANN@example.com', password: PASSWORD });
    expect(started).not.toBeNull();
    expect(started!.token).toMatch(/^fleet_ses_/);
    expect(started!.session).toMatchObject({ user_id, customer_id: customerId, token_sha256: sha256Hex(started!.token), expires_at: T0 + SESSION_TTL_MS });
    const events = await store.readStream(streams.user(user_id));
    expect(events.map((e) => e.type)).toEqual(['CustomerUserCreated', 'SessionStarted']);
    expect(JSON.stringify(events.map((e) => e.data))).not.toContain(started!.token);

    await endSession(store, clock, started!.session);
    expect((await store.readStream(streams.user(user_id))).at(-1)).toMatchObject({ type: 'SessionEnded', data: { session_id: started!.session.session_id } });
  });

  it('answers null for a wrong password, an unknown email and an over-long password, writing nothing', async () => {
    const { store, clock } = open();
    const customerId = await customer(store, clock);
    const { user_id } = await createUser(store, clock, { customer_id: customerId, email: 'ann@example.com', name: 'Ann', password: PASSWORD });
    expect(await startSession(store, clock, { email: 'ann@example.com', password: 'wrong password!' })).toBeNull();
    expect(await startSession(store, clock, { email: 'nobody@example.com', password: PASSWORD })).toBeNull();
    expect(await startSession(store, clock, { email: 'ann@example.com', password: PASSWORD + 'x'.repeat(2000) })).toBeNull();
    expect(await store.readStream(streams.user(user_id))).toHaveLength(1);
  });
});
