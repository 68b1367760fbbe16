/** The logged-in session (user, customer, CSRF token) and the live stream that goes with it. */
import { setCsrfToken, type Session } from './api';
import { startLive, stopLive } from './live';

let current: Session | null = null;

export function getSession(): Session | null {
  return current;
}

export function setSession(s: Session | null): void {
  current = s;
  setCsrfToken(s?.csrf_token ?? null);
  if (s) startLive();
  else stopLive();
}
