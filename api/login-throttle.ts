/**
 * Failed panel logins, counted per key (an email, a client address) in a
 * fixed window from the key's first failure: after `maxFailures` the key is
 * refused until the window ends, even with the right password, so guessing
 * costs the guesser 15 minutes per handful of tries. Kept in this process,
 * like the request rate limiter: N API nodes allow N times the failures.
 */
import type { Clock } from '../core/clock.js';

export const LOGIN_MAX_FAILURES = 5;
export const LOGIN_WINDOW_MS = 15 * 60_000;
/** Above this many keys, windows that ended are swept, so a spray of emails cannot grow the map forever. */
const SWEEP_ABOVE = 10_000;

export class LoginThrottle {
  private readonly failures = new Map<string, { count: number; until: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly maxFailures = LOGIN_MAX_FAILURES,
    private readonly windowMs = LOGIN_WINDOW_MS,
  ) {}

  /** Seconds until the first of `keys` that is blocked may try again; null when none is. */
  retryAfterS(keys: readonly string[]): number | null {
    const now = this.clock.now();
    let wait = 0;
    for (const key of keys) {
      const f = this.failures.get(key);
      if (f && f.until > now && f.count >= this.maxFailures) wait = Math.max(wait, f.until - now);
    }
    return wait > 0 ? Math.ceil(wait / 1000) : null;
  }

  failed(keys: readonly string[]): void {
    const now = this.clock.now();
    if (this.failures.size > SWEEP_ABOVE) for (const [k, f] of this.failures) if (f.until <= now) this.failures.delete(k);
    for (const key of keys) {
      const f = this.failures.get(key);
      if (f && f.until > now) f.count++;
      else this.failures.set(key, { count: 1, until: now + this.windowMs });
    }
  }

  /** A right password clears that key's failures (the email's; an address keeps its count). */
  succeeded(key: string): void {
    this.failures.delete(key);
  }
}
