/**
 * Customer users (panel logins) and their sessions. An email is unique across
 * the platform: it is claimed in a stream of its own (claims.ts) before the
 * user's creation event is written. Logins read the claim and the user's
 * stream, not a read model, so a user can log in the moment it exists.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import { SESSION_TOKEN_PREFIX, generateSecret, sha256Hex } from '../credentials.js';
import type { CustomerUserCreated, SessionStarted } from '../events.js';
import type { EventStore, EventToAppend, LogPosition, RecordedEvent } from '../event-store/port.js';
import { newId, randomUuid } from '../ids.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, hashPassword, unknownUserHash, verifyPassword } from '../passwords.js';
import { streams } from '../streams.js';
import { takeClaim } from './claims.js';
import { CommandRejected } from './rejection.js';

/** How long a panel session lasts from its login; there is no sliding renewal. */
export const SESSION_TTL_MS = 12 * 3_600_000;

/** Loose on purpose: the address is a login name here, not something we send mail to. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** Emails compare lowercased and trimmed: `Ann@Example.com ` and `ann@example.com` are one login. */
export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

function emailStream(email: string): string {
  return streams.userEmail(createHash('sha256').update(email).digest('hex').slice(0, 32));
}

export interface NewUserInput {
  customer_id: string;
  email: string;
  name: string;
  password: string;
}

/** A user ready to be written: its email claimed, its password hashed. */
export interface PreparedUser {
  user_id: string;
  email: string;
  stream: string;
  event: EventToAppend & { type: 'CustomerUserCreated'; data: CustomerUserCreated['data'] };
}

function validate(input: NewUserInput): string {
  const email = normalizeEmail(input.email);
  if (email.length > 254 || !EMAIL.test(email)) throw new CommandRejected('invalid', 'validation_failed', 'email must be an email address', '/email');
  if (input.name.trim() === '' || input.name.length > 200) throw new CommandRejected('invalid', 'validation_failed', 'name must be 1 to 200 characters', '/name');
  if (input.password.length < MIN_PASSWORD_LENGTH || input.password.length > MAX_PASSWORD_LENGTH) {
    throw new CommandRejected('invalid', 'validation_failed', `password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`, '/password');
  }
  return email;
}

/**
 * Validates, claims the email and hashes the password; the caller appends
 * `event` to `stream` last (createCustomer does so after the customer's own
 * events, so its first user and the customer appear together).
 */
export async function prepareUser(store: EventStore, clock: Clock, input: NewUserInput): Promise<PreparedUser> {
  const email = validate(input);
  const now = clock.now();
  const userId = newId('usr', now);
  const claim = await takeClaim(store, clock, {
    stream: emailStream(email),
    event: { id: randomUuid(), type: 'UserEmailClaimed', data: { user_id: userId, customer_id: input.customer_id, email, claimed_at: now } },
    ownerOf: emailOwner,
  });
  if (!claim) throw new CommandRejected('conflict', 'email_taken', `A user with the email ${email} already exists.`, '/email');
  const data: CustomerUserCreated['data'] = {
    user_id: userId,
    customer_id: input.customer_id,
    email,
    name: input.name.trim(),
    password_hash: await hashPassword(input.password),
    created_at: now,
  };
  return { user_id: userId, email, stream: streams.user(userId), event: { id: randomUuid(), type: 'CustomerUserCreated', data } };
}

/** Adds a user to an existing customer; an unknown customer is not found. */
export async function createUser(store: EventStore, clock: Clock, input: NewUserInput): Promise<{ user_id: string; email: string; position: LogPosition }> {
  const [first] = await store.readStream(streams.tenant(input.customer_id), { maxCount: 1 });
  if (first?.type !== 'CustomerCreated') throw new CommandRejected('not_found', 'not_found', `No customer ${input.customer_id}.`);
  const user = await prepareUser(store, clock, input);
  const result = await store.appendToStream(user.stream, [user.event], { expectedRevision: 'no_stream' });
  return { user_id: user.user_id, email: user.email, position: result.position };
}

function emailOwner(event: RecordedEvent): { ownerStream: string; claimedAt: number } | null {
  if (event.type !== 'UserEmailClaimed') return null;
  return { ownerStream: streams.user(event.data.user_id), claimedAt: event.data.claimed_at };
}

/** The user an email logs in as, or null when nobody has it. */
async function userByEmail(store: EventStore, email: string): Promise<CustomerUserCreated['data'] | null> {
  const [claim] = await store.readStream(emailStream(email), { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
  if (claim?.type !== 'UserEmailClaimed') return null;
  const [created] = await store.readStream(streams.user(claim.data.user_id), { maxCount: 1 });
  return created?.type === 'CustomerUserCreated' ? created.data : null;
}

export interface StartedSession {
  /** The cookie's value: exists only in the caller's hands from here on. */
  token: string;
  session: SessionStarted['data'];
  position: LogPosition;
}

/**
 * A login: null when the email is unknown or the password wrong (the same
 * answer, after the same scrypt work, so emails cannot be probed).
 */
export async function startSession(store: EventStore, clock: Clock, input: { email: string; password: string }): Promise<StartedSession | null> {
  const tooLong = input.password.length > MAX_PASSWORD_LENGTH;
  const user = await userByEmail(store, normalizeEmail(input.email));
  const hash = user && !tooLong ? user.password_hash : await unknownUserHash();
  const matches = await verifyPassword(input.password.slice(0, MAX_PASSWORD_LENGTH), hash);
  if (!user || tooLong || !matches) return null;
  const now = clock.now();
  const token = generateSecret(SESSION_TOKEN_PREFIX);
  const session: SessionStarted['data'] = {
    session_id: newId('ses', now),
    user_id: user.user_id,
    customer_id: user.customer_id,
    token_sha256: sha256Hex(token),
    started_at: now,
    expires_at: now + SESSION_TTL_MS,
  };
  const result = await store.appendToStream(streams.user(user.user_id), [{ id: randomUuid(), type: 'SessionStarted', data: session }], {
    expectedRevision: 'stream_exists',
  });
  return { token, session, position: result.position };
}

/** A logout: the session's token is refused from the moment the read model has this event. */
export async function endSession(
  store: EventStore,
  clock: Clock,
  session: { session_id: string; user_id: string; customer_id: string },
): Promise<LogPosition> {
  const result = await store.appendToStream(streams.user(session.user_id), [
    { id: randomUuid(), type: 'SessionEnded', data: { ...session, ended_at: clock.now() } },
  ]);
  return result.position;
}
