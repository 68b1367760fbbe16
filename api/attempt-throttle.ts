/**
 * Attempts at a secret (panel logins, OAuth client secrets), counted per key
 * (an email, a client id, a client address) in a fixed window from the key's
 * first failure: after `maxFailures` the key is refused until the window
 * ends, even with the right secret, so guessing costs the guesser a window
 * per handful of tries.
 *
 * An attempt takes a slot on each of its keys *before* the secret is checked
 * (`begin`) and settles it after: a failure keeps the slot as a failure, a
 * success or a fault releases it. Slots in flight count against the limit, so
 * N requests sent at once get at most `maxFailures` secret checks through
 * (the rest are refused at once), and one key never has more than that many
 * checks (scrypt, for logins) running: a burst cannot queue up work that
 * others' logins wait behind.
 *
 * Kept in this process, like the request rate limiter: N API nodes allow N
 * times the failures (a shared limiter needs a shared store; a later issue).
 */
import type { Clock } from '../core/clock.js';

export interface AttemptLimits {
  maxFailures: number;
  windowMs: number;
}

/** Panel logins (docs/api-decisions.md, Panel sessions). */
export const LOGIN_LIMITS: AttemptLimits = { maxFailures: 5, windowMs: 15 * 60_000 };
/**
 * Above this many keys, idle keys whose window ended are swept, so a spray of emails cannot grow the
 * map forever; the next sweep waits until the map has doubled, so a spray of live keys costs each
 * attempt a sweep's share, not a walk of the whole map.
 */
const SWEEP_ABOVE = 10_000;
/** What a refusal for attempts still in flight says to wait: they settle within a second or so. */
const IN_FLIGHT_RETRY_S = 1;

interface KeyState {
  failures: number;
  /** When the window of `failures` ends, ms. */
  until: number;
  /** Attempts begun and not settled. */
  inFlight: number;
}

/** A begun attempt; the first of its calls settles it, later ones do nothing (so a `finally` may abandon it). */
export interface Attempt {
  /** The secret was wrong: the slot becomes a failure of every key. */
  failed(): void;
  /** The secret was right: the slots are released, and the failures of `clear` (some of the attempt's keys) forgotten. */
  succeeded(clear?: readonly string[]): void;
  /** Neither was learnt (a server fault): the slots are released, nothing is counted. */
  abandon(): void;
}

export interface Refusal {
  /** Seconds until the attempt may be made again. */
  retryAfterS: number;
}

export class AttemptThrottle {
  private readonly keys = new Map<string, KeyState>();
  private sweepAbove = SWEEP_ABOVE;

  constructor(
    private readonly clock: Clock,
    private readonly limits: AttemptLimits = LOGIN_LIMITS,
  ) {}

  /** Takes a slot on every key, or refuses (taking none) when a key is blocked or its slots are all in flight. */
  begin(keys: readonly string[]): Attempt | Refusal {
    const now = this.clock.now();
    const unique = [...new Set(keys)];
    let waitMs = 0;
    for (const key of unique) {
      const s = this.keys.get(key);
      if (!s) continue;
      const failures = s.until > now ? s.failures : 0;
      if (failures >= this.limits.maxFailures) waitMs = Math.max(waitMs, s.until - now);
      else if (failures + s.inFlight >= this.limits.maxFailures) waitMs = Math.max(waitMs, IN_FLIGHT_RETRY_S * 1000);
    }
    if (waitMs > 0) return { retryAfterS: Math.ceil(waitMs / 1000) };
    if (this.keys.size > this.sweepAbove) {
      this.sweep(now);
      this.sweepAbove = Math.max(SWEEP_ABOVE, this.keys.size * 2);
    }
    for (const key of unique) {
      const s = this.keys.get(key);
      if (s) s.inFlight++;
      else this.keys.set(key, { failures: 0, until: 0, inFlight: 1 });
    }
    let settled = false;
    const settle = (outcome: 'failed' | 'released', clear: readonly string[] = []) => {
      if (settled) return;
      settled = true;
      const at = this.clock.now();
      for (const key of unique) this.settleKey(key, outcome === 'failed', clear.includes(key), at);
    };
    return {
      failed: () => settle('failed'),
      succeeded: (clear) => settle('released', clear),
      abandon: () => settle('released'),
    };
  }

  private settleKey(key: string, failed: boolean, clear: boolean, now: number): void {
    const s = this.keys.get(key);
    if (!s) return;
    s.inFlight--;
    if (failed) {
      if (s.until > now) s.failures++;
      else Object.assign(s, { failures: 1, until: now + this.limits.windowMs });
    }
    if (clear) s.failures = 0;
    if (s.inFlight === 0 && (s.failures === 0 || s.until <= now)) this.keys.delete(key);
  }

  private sweep(now: number): void {
    for (const [k, s] of this.keys) if (s.inFlight === 0 && s.until <= now) this.keys.delete(k);
  }
}

export function isRefusal(a: Attempt | Refusal): a is Refusal {
  return 'retryAfterS' in a;
}
