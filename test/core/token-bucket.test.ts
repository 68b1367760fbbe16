/** The shared budgets: a token bucket, and the per-key throttle in front of it. */
import { describe, expect, it } from 'vitest';
import { KeyedThrottle } from '../../gateway/keyed-throttle.js';
import { TokenBucket } from '../../core/token-bucket.js';

describe('TokenBucket', () => {
  it('gives a burst, then tokens at the refill rate, never more than the burst', () => {
    const bucket = new TokenBucket(3, 2);
    const t0 = 1_000_000;
    expect([1, 2, 3, 4].map(() => bucket.take(t0))).toEqual([true, true, true, false]);
    expect(bucket.waitMs(t0)).toBe(500);
    expect(bucket.take(t0 + 499)).toBe(false);
    expect(bucket.take(t0 + 500)).toBe(true);
    // A long pause refills to the burst only.
    const later = t0 + 60_000;
    expect([1, 2, 3, 4].map(() => bucket.take(later))).toEqual([true, true, true, false]);
  });

  it('does not refill when the clock steps back', () => {
    const bucket = new TokenBucket(1, 1);
    expect(bucket.take(10_000)).toBe(true);
    expect(bucket.take(5_000)).toBe(false);
    expect(bucket.take(10_500)).toBe(false);
    expect(bucket.take(11_000)).toBe(true);
  });
});

describe('KeyedThrottle', () => {
  it('writes a key once per interval with the count it stands for, within the shared bucket', () => {
    const throttle = new KeyedThrottle(60_000, new TokenBucket(2, 1 / 60));
    const t0 = 0;
    expect(throttle.take('a', t0)).toBe(1);
    expect(throttle.take('a', t0 + 1)).toBe(0);
    expect(throttle.take('a', t0 + 2)).toBe(0);
    expect(throttle.take('b', t0 + 3)).toBe(1);
    // Bucket spent: a new key is held back (-1) and counted into its next event.
    expect(throttle.take('c', t0 + 4)).toBe(-1);
    expect(throttle.take('a', t0 + 61_000)).toBe(3);
    expect(throttle.take('c', t0 + 122_000)).toBe(2);
  });
});
