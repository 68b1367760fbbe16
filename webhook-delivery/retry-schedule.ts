/**
 * When a failed webhook attempt is tried again. Pure: the caller injects the
 * random source, so tests and replays are deterministic.
 *
 * Attempt 1 is the first delivery; after each failure the next attempt waits
 * about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (±10% jitter so
 * endpoints recovering from an outage are not hit by every backlog at once).
 * After attempt 10 fails the delivery is `failed`. Total span ≈ 3.2 days.
 */

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;

/** Delay before attempt n+2, indexed by n = (attempt that just failed) - 1. */
export const RETRY_SCHEDULE_MS: readonly number[] = [5 * S, 5 * MIN, 30 * MIN, 2 * H, 5 * H, 10 * H, 14 * H, 20 * H, 24 * H];
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;
export const JITTER_RATIO = 0.1;
/** A receiver's Retry-After is honoured up to this; beyond it the schedule would stall. */
export const MAX_RETRY_AFTER_MS = 24 * H;

/** Retry-After is honoured on 429 and 503 only, the statuses where it means "come back later". */
export function honoursRetryAfter(status: number | null): boolean {
  return status === 429 || status === 503;
}

/**
 * Milliseconds to wait before the next attempt, or null when `attempt` was
 * the last one. `random` returns [0, 1) like Math.random. `retryAfterMs`
 * (from a 429/503) wins when it is longer than the scheduled delay.
 */
export function nextAttemptDelayMs(attempt: number, random: () => number, retryAfterMs?: number): number | null {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a positive integer, got ${attempt}`);
  const base = RETRY_SCHEDULE_MS[attempt - 1];
  if (base === undefined) return null;
  const r = Math.min(Math.max(random(), 0), 1);
  const jittered = Math.round(base * (1 + (2 * r - 1) * JITTER_RATIO));
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs) || retryAfterMs <= 0) return jittered;
  return Math.max(jittered, Math.min(Math.round(retryAfterMs), MAX_RETRY_AFTER_MS));
}

/**
 * A Retry-After header as a delay in milliseconds from `nowMs`: either
 * delta-seconds or an HTTP date (a past date means 0). Undefined when absent
 * or unparseable.
 */
export function parseRetryAfter(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (text === '') return undefined;
  if (/^\d+$/.test(text)) return Math.min(Number(text), Number.MAX_SAFE_INTEGER / 1000) * 1000;
  // Only date-shaped text: Date.parse also accepts bare numbers like "-5" or "1.5".
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
