/**
 * The end of a credential that was checked when a long-lived request began
 * (the live stream): its revocation as the projections commit it, or its
 * expiry on the injected clock. Ordinary requests need none of this: each is
 * authenticated afresh.
 */
import type { Clock } from '../core/clock.js';
import type { RecordedEvent } from '../core/event-store/port.js';
import type { AuthContext } from './plugins/auth.js';
import type { SseConnection } from './sse.js';

/**
 * Whether `e` revokes the credential: its API key revoked, the OAuth client of
 * its token deleted (the tokens die with it), or its panel session logged out.
 */
export function revokes(auth: AuthContext, e: RecordedEvent): boolean {
  const { kind, id } = auth.credential;
  if (kind === 'api_key') return e.type === 'ApiKeyRevoked' && e.data.key_id === id;
  if (kind === 'session') return e.type === 'SessionEnded' && e.data.session_id === id;
  return e.type === 'OAuthClientDeleted' && e.data.client_id === id;
}

/** Timers cannot wait longer than this (about 24.8 days); a later expiry is found by the keep-alive checks. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Ends `conn` when the credential expires on `clock`: a timer set for the
 * expiry, and a look at the clock before every keep-alive, so a clock that
 * jumps ahead (or a test's manual clock) is noticed within one interval.
 */
export function closeOnExpiry(conn: SseConnection, auth: AuthContext, clock: Clock): void {
  const { expiresAt } = auth;
  if (expiresAt === null) return;
  const check = () => {
    if (clock.now() >= expiresAt) conn.close('credential expired');
  };
  const timer = setTimeout(check, Math.min(Math.max(0, expiresAt - clock.now()), MAX_TIMER_MS));
  conn.onKeepAlive(check);
  conn.onClose(() => clearTimeout(timer));
}
