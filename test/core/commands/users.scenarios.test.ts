/** User commands as given / when / then: the email claim, the user, its sessions. */
import { beforeAll, describe, expect, it } from 'vitest';
import { STALE_CLAIM_MS } from '../../../core/commands/claims.js';
import { SESSION_TTL_MS, createUser, emailStream, endSession, startSession } from '../../../core/commands/users.js';
import { sha256Hex } from '../../../core/credentials.js';
import type { DomainEvent } from '../../../core/events.js';
import { hashPassword } from '../../../core/passwords.js';
import { streams } from '../../../core/streams.js';
import { T0, given } from '../../support/given-when-then.js';

const PASSWORD = 'correct horse battery';
const EMAIL = 'ann@example.com';
const customer = { [streams.tenant('cus_a')]: [{ type: 'CustomerCreated', data: { customer_id: 'cus_a', name: 'Acme', plan: 'pro', created_at: T0 } } as DomainEvent] };
const emailClaimed = (userId: string, claimedAt = T0): DomainEvent => ({ type: 'UserEmailClaimed', data: { user_id: userId, customer_id: 'cus_a', email: EMAIL, claimed_at: claimedAt } });

let user: Record<string, DomainEvent[]>;
beforeAll(async () => {
  const created: DomainEvent = { type: 'CustomerUserCreated', data: { user_id: 'usr_1', customer_id: 'cus_a', email: EMAIL, name: 'Ann', password_hash: await hashPassword(PASSWORD), created_at: T0 } };
  user = { ...customer, [emailStream(EMAIL)]: [emailClaimed('usr_1')], [streams.user('usr_1')]: [created] };
});

describe('createUser', () => {
  it('claims the lowercased email, then writes the user with a password hash', async () => {
    const then = await given(customer).when((store, clock) => createUser(store, clock, { customer_id: 'cus_a', email: ' Ann@Example.COM ', name: ' Ann ', password: PASSWORD }));
    const userId = then.result!.user_id;
    expect(then.result!.email).toBe(EMAIL);
    expect(then.appended).toEqual({
      [emailStream(EMAIL)]: [emailClaimed(userId)],
      [streams.user(userId)]: [
        { type: 'CustomerUserCreated', data: { user_id: userId, customer_id: 'cus_a', email: EMAIL, name: 'Ann', password_hash: expect.stringMatching(/^scrypt\$/), created_at: T0 } },
      ],
    });
  });

  it('refuses an unknown customer, a malformed email, a blank name and a short password, writing nothing', async () => {
    for (const [history, input, refusal] of [
      [{}, { email: EMAIL, name: 'A', password: PASSWORD }, { kind: 'not_found', code: 'not_found' }],
      [customer, { email: 'not an email', name: 'A', password: PASSWORD }, { kind: 'invalid', field: '/email' }],
      [customer, { email: EMAIL, name: '  ', password: PASSWORD }, { kind: 'invalid', field: '/name' }],
      [customer, { email: EMAIL, name: 'A', password: 'short' }, { kind: 'invalid', field: '/password' }],
    ] as const) {
      const then = await given(history).when((store, clock) => createUser(store, clock, { customer_id: 'cus_a', ...input }));
      expect(then.refused()).toMatchObject(refusal);
      expect(then.appended).toEqual({});
    }
  });

  it('refuses an email a user has, whichever customer', async () => {
    const then = await given(user, { now: T0 + 10 * STALE_CLAIM_MS }).when((store, clock) => createUser(store, clock, { customer_id: 'cus_a', email: 'ANN@example.com', name: 'A', password: PASSWORD }));
    expect(then.refused()).toMatchObject({ kind: 'conflict', code: 'email_taken', field: '/email' });
    expect(then.appended).toEqual({});
  });

  it('takes over the email claim of a user that was never written, once stale', async () => {
    const history = { ...customer, [emailStream(EMAIL)]: [emailClaimed('usr_ghost')] };
    const early = await given(history, { now: T0 + STALE_CLAIM_MS - 1 }).when((store, clock) => createUser(store, clock, { customer_id: 'cus_a', email: EMAIL, name: 'A', password: PASSWORD }));
    expect(early.refused()).toMatchObject({ code: 'email_taken' });
    const now = T0 + STALE_CLAIM_MS;
    const late = await given(history, { now }).when((store, clock) => createUser(store, clock, { customer_id: 'cus_a', email: EMAIL, name: 'A', password: PASSWORD }));
    expect(late.appended[emailStream(EMAIL)]).toEqual([emailClaimed(late.result!.user_id, now)]);
  });
});

describe('sessions', () => {
  it('starts a session for the right password, keeping the token digest, for 12 hours', async () => {
    const then = await given(user).when((store, clock) => startSession(store, clock, { email: 'ANN@example.com', password: PASSWORD }));
    const { token, session } = then.result!;
    const data = { session_id: session.session_id, user_id: 'usr_1', customer_id: 'cus_a', token_sha256: sha256Hex(token), started_at: T0, expires_at: T0 + SESSION_TTL_MS };
    expect(session).toEqual(data);
    expect(then.appended).toEqual({ [streams.user('usr_1')]: [{ type: 'SessionStarted', data }] });
  });

  it('answers null, writing nothing, for a wrong password, an unknown email and an over-long password', async () => {
    for (const input of [
      { email: EMAIL, password: 'wrong password!' },
      { email: 'nobody@example.com', password: PASSWORD },
      { email: EMAIL, password: PASSWORD + 'x'.repeat(2000) },
    ]) {
      const then = await given(user).when((store, clock) => startSession(store, clock, input));
      expect(then.result).toBeNull();
      expect(then.appended).toEqual({});
    }
  });

  it('ends a session', async () => {
    const session = { session_id: 'ses_1', user_id: 'usr_1', customer_id: 'cus_a' };
    const then = await given(user).when((store, clock) => endSession(store, clock, session));
    expect(then.appended).toEqual({ [streams.user('usr_1')]: [{ type: 'SessionEnded', data: { ...session, ended_at: T0 } }] });
  });
});
