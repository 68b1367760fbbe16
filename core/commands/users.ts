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
import type { EventStore, LogPosition } from '../event-store/port.js';
import { newId } from '../ids.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, hashPassword, unknownUserHash, verifyPassword } from '../passwords.js';
import { streams } from '../streams.js';
import { claimStream, takeClaim } from './claims.js';
import { type Aggregate, type Loaded, type NewEvent, handle, load } from './handler.js';
import { CommandRejected } from './rejection.js';
import { checkCustomer, tenantStream } from './tenant.js';

/** How long a panel session lasts from its login; there is no sliding renewal. */
export const SESSION_TTL_MS = 12 * 3_600_000;

/** A user's stream is its creation, then its sessions: commands need the creation only. */
export type UserState = CustomerUserCreated['data'] | null;

export const userStream: Aggregate<UserState> = {
  initial: null,
  evolve: (state, event) => (event.type === 'CustomerUserCreated' ? event.data : state),
  reads: 'first',
};

/** Loose on purpose: the address is a login name here, not something we send mail to. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** Emails compare lowercased and trimmed: `Ann@Example.com ` and `ann@example.com` are one login. */
export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

/** The claim stream of an email, keyed by a digest of it (already lowercased). */
export function emailStream(email: string): string {
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
  created: CustomerUserCreated['data'];
}

/** Refused before the email is claimed. */
export function checkNewUser(input: NewUserInput): string {
  const email = normalizeEmail(input.email);
  if (email.length > 254 || !EMAIL.test(email)) throw new CommandRejected('invalid', 'validation_failed', 'email must be an email address', '/email');
  if (input.name.trim() === '' || input.name.length > 200) throw new CommandRejected('invalid', 'validation_failed', 'name must be 1 to 200 characters', '/name');
  if (input.password.length < MIN_PASSWORD_LENGTH || input.password.length > MAX_PASSWORD_LENGTH) {
    throw new CommandRejected('invalid', 'validation_failed', `password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`, '/password');
  }
  return email;
}

/**
 * Validates, claims the email and hashes the password; the caller writes the
 * user last (`writeUser`: createCustomer does so after the customer's own
 * events, so its first user and the customer appear together).
 */
export async function prepareUser(store: EventStore, clock: Clock, input: NewUserInput): Promise<PreparedUser> {
  const email = checkNewUser(input);
  const now = clock.now();
  const userId = newId('usr', now);
  const claim = await takeClaim(store, clock, {
    stream: emailStream(email),
    event: { type: 'UserEmailClaimed', data: { user_id: userId, customer_id: input.customer_id, email, claimed_at: now } },
  });
  if (!claim) throw new CommandRejected('conflict', 'email_taken', `A user with the email ${email} already exists.`, '/email');
  const created: CustomerUserCreated['data'] = {
    user_id: userId,
    customer_id: input.customer_id,
    email,
    name: input.name.trim(),
    password_hash: await hashPassword(input.password),
    created_at: now,
  };
  return { user_id: userId, email, created };
}

export function decideCreateUser(state: UserState, created: CustomerUserCreated['data']): NewEvent[] {
  if (state) throw new CommandRejected('conflict', 'already_exists', `user ${created.user_id} already exists`);
  return [{ type: 'CustomerUserCreated', data: created }];
}

export async function writeUser(store: EventStore, user: PreparedUser): Promise<LogPosition> {
  const { position } = await handle(store, { stream: streams.user(user.user_id), aggregate: userStream, decide: (state) => decideCreateUser(state, user.created) });
  return position!;
}

/** Adds a user to an existing customer; an unknown customer is not found. */
export async function createUser(store: EventStore, clock: Clock, input: NewUserInput): Promise<{ user_id: string; email: string; position: LogPosition }> {
  checkCustomer((await load(store, streams.tenant(input.customer_id), tenantStream)).state, input.customer_id);
  const user = await prepareUser(store, clock, input);
  return { user_id: user.user_id, email: user.email, position: await writeUser(store, user) };
}

/** The user an email logs in as, or null when nobody has it. */
async function userByEmail(store: EventStore, email: string): Promise<{ stream: string; user: CustomerUserCreated['data']; loaded: Loaded<UserState> } | null> {
  const { state: claim } = await load(store, emailStream(email), claimStream);
  if (!claim.holder) return null;
  const loaded = await load(store, claim.holder.ownerStream, userStream);
  return loaded.state ? { stream: claim.holder.ownerStream, user: loaded.state, loaded } : null;
}

export interface StartedSession {
  /** The cookie's value: exists only in the caller's hands from here on. */
  token: string;
  session: SessionStarted['data'];
  position: LogPosition;
}

/** A session of an existing user; `session` is what the caller drew (its id, its token's digest). */
export function decideStartSession(state: UserState, session: Pick<SessionStarted['data'], 'session_id' | 'token_sha256'>, now: number): NewEvent[] {
  if (!state) throw new CommandRejected('not_found', 'not_found', 'No such user.');
  const data: SessionStarted['data'] = {
    session_id: session.session_id,
    user_id: state.user_id,
    customer_id: state.customer_id,
    token_sha256: session.token_sha256,
    started_at: now,
    expires_at: now + SESSION_TTL_MS,
  };
  return [{ type: 'SessionStarted', data }];
}

/**
 * A login: null when the email is unknown or the password wrong (the same
 * answer, after the same scrypt work, so emails cannot be probed).
 */
export async function startSession(store: EventStore, clock: Clock, input: { email: string; password: string }): Promise<StartedSession | null> {
  const tooLong = input.password.length > MAX_PASSWORD_LENGTH;
  const found = await userByEmail(store, normalizeEmail(input.email));
  const hash = found && !tooLong ? found.user.password_hash : await unknownUserHash();
  const matches = await verifyPassword(input.password.slice(0, MAX_PASSWORD_LENGTH), hash);
  if (!found || tooLong || !matches) return null;
  const now = clock.now();
  const token = generateSecret(SESSION_TOKEN_PREFIX);
  const drawn = { session_id: newId('ses', now), token_sha256: sha256Hex(token) };
  const { events, position } = await handle(
    store,
    { stream: found.stream, aggregate: userStream, decide: (state) => decideStartSession(state, drawn, now) },
    { loaded: found.loaded },
  );
  return { token, session: events[0]!.data as SessionStarted['data'], position: position! };
}

export function decideEndSession(_state: UserState, session: { session_id: string; user_id: string; customer_id: string }, now: number): NewEvent[] {
  return [{ type: 'SessionEnded', data: { ...session, ended_at: now } }];
}

/** A logout: the session's token is refused from the moment the read model has this event. */
export async function endSession(
  store: EventStore,
  clock: Clock,
  session: { session_id: string; user_id: string; customer_id: string },
): Promise<LogPosition> {
  const now = clock.now();
  const { position } = await handle(store, { stream: streams.user(session.user_id), aggregate: userStream, decide: (state) => decideEndSession(state, session, now) });
  return position!;
}
