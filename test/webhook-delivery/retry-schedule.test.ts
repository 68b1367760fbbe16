import { describe, expect, it } from 'vitest';
import {
  MAX_ATTEMPTS,
  honoursRetryAfter,
  nextAttemptDelayMs,
  parseRetryAfter,
} from '../../webhook-delivery/retry-schedule.js';

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const middle = () => 0.5;

describe('nextAttemptDelayMs', () => {
  it('follows 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, then gives up after 10 attempts', () => {
    const delays = [];
    for (let attempt = 1; ; attempt++) {
      const d = nextAttemptDelayMs(attempt, middle);
      if (d === null) break;
      delays.push(d);
    }
    expect(delays).toEqual([5 * S, 5 * MIN, 30 * MIN, 2 * H, 5 * H, 10 * H, 14 * H, 20 * H, 24 * H]);
    expect(MAX_ATTEMPTS).toBe(10);
    expect(nextAttemptDelayMs(10, middle)).toBeNull();
    expect(nextAttemptDelayMs(11, middle)).toBeNull();
  });

  it('jitters by at most ±10%', () => {
    expect(nextAttemptDelayMs(1, () => 0)).toBe(4500);
    expect(nextAttemptDelayMs(1, () => 0.999999)).toBeCloseTo(5500, -1);
    expect(nextAttemptDelayMs(2, () => 0.25)).toBe(5 * MIN * 0.95);
    for (let i = 0; i < 200; i++) {
      const d = nextAttemptDelayMs(4, Math.random) as number;
      expect(d).toBeGreaterThanOrEqual(2 * H * 0.9);
      expect(d).toBeLessThanOrEqual(2 * H * 1.1);
    }
  });

  it('takes Retry-After when it is longer than the schedule, capped at 24 h', () => {
    expect(nextAttemptDelayMs(1, middle, 60 * S)).toBe(60 * S);
    expect(nextAttemptDelayMs(1, middle, 1 * S)).toBe(5 * S);
    expect(nextAttemptDelayMs(2, middle, 7 * 24 * H)).toBe(24 * H);
    expect(nextAttemptDelayMs(9, () => 0.999, 7 * 24 * H)).toBeGreaterThan(24 * H);
  });

  it('still gives up after the last attempt whatever Retry-After says', () => {
    expect(nextAttemptDelayMs(10, middle, 10 * S)).toBeNull();
  });

  it('ignores nonsense Retry-After values', () => {
    expect(nextAttemptDelayMs(1, middle, -5)).toBe(5 * S);
    expect(nextAttemptDelayMs(1, middle, Number.NaN)).toBe(5 * S);
  });

  it('rejects an attempt number that is not a positive integer', () => {
    expect(() => nextAttemptDelayMs(0, middle)).toThrow(RangeError);
    expect(() => nextAttemptDelayMs(1.5, middle)).toThrow(RangeError);
  });
});

describe('honoursRetryAfter', () => {
  it('is true for 429 and 503 only', () => {
    expect([429, 503, 500, 502, 200, 410, null].map(honoursRetryAfter)).toEqual([true, true, false, false, false, false, false]);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 10, 24, 12, 0, 0);

  it('reads delta-seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120 * S);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it('reads an HTTP date relative to now, a past date as 0', () => {
    expect(parseRetryAfter('Tue, 24 Nov 2026 12:05:00 GMT', now)).toBe(5 * MIN);
    expect(parseRetryAfter('Tue, 24 Nov 2026 11:00:00 GMT', now)).toBe(0);
  });

  it('is undefined when absent or unparseable', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});
