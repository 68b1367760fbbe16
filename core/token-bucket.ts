/**
 * A token bucket on an injected time: `capacity` tokens, refilled
 * continuously at `perMinute / 60` a second. Pure arithmetic on a small
 * state object, so the rate limiter and its tests share one definition.
 */
export interface BucketState {
  tokens: number;
  /** When `tokens` was last brought up to date, ms. */
  at: number;
}

export interface BucketLimits {
  capacity: number;
  perMinute: number;
}

export interface TakeResult {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetS: number;
  /** Seconds until one token is available (0 when allowed). */
  retryAfterS: number;
}

export function fullBucket(limits: BucketLimits, now: number): BucketState {
  return { tokens: limits.capacity, at: now };
}

/** The tokens the bucket holds at `now`, refilled for the time elapsed; takes none and changes nothing. */
export function availableTokens(state: BucketState, limits: BucketLimits, now: number): number {
  return Math.min(limits.capacity, state.tokens + Math.max(0, now - state.at) * (limits.perMinute / 60_000));
}

/** Refills for the time elapsed, then takes one token if there is one. Mutates `state`. */
export function take(state: BucketState, limits: BucketLimits, now: number): TakeResult {
  const perMs = limits.perMinute / 60_000;
  // A clock that steps back (NTP) must not drain the bucket.
  const elapsed = Math.max(0, now - state.at);
  state.tokens = Math.min(limits.capacity, state.tokens + elapsed * perMs);
  state.at = Math.max(state.at, now);
  // The epsilon absorbs float error in elapsed * perMs (a token due now counts as here).
  const allowed = state.tokens >= 1 - 1e-9;
  if (allowed) state.tokens = Math.max(0, state.tokens - 1);
  return {
    allowed,
    remaining: Math.floor(state.tokens),
    resetS: Math.ceil((limits.capacity - state.tokens) / perMs / 1000),
    retryAfterS: allowed ? 0 : Math.max(1, Math.ceil((1 - state.tokens) / perMs / 1000)),
  };
}

/** One bucket as an object (shared by many callers, or one per key), on the same arithmetic. */
export class TokenBucket {
  private state: BucketState | null = null;
  private readonly limits: BucketLimits;

  constructor(
    readonly burst: number,
    readonly perSecond: number,
  ) {
    this.limits = { capacity: burst, perMinute: perSecond * 60 };
  }

  /** Takes one token if there is one. */
  take(now: number): boolean {
    this.state ??= fullBucket(this.limits, now);
    return take(this.state, this.limits, now).allowed;
  }

  /** Milliseconds until a token is there (0: now); takes nothing. */
  waitMs(now: number): number {
    this.state ??= fullBucket(this.limits, now);
    const tokens = availableTokens(this.state, this.limits, now);
    return tokens >= 1 - 1e-9 ? 0 : Math.ceil(((1 - tokens) / this.perSecond) * 1000);
  }
}
