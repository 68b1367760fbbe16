/** The order rule of a lane: what its first pending rows offer now. */
import { describe, expect, it } from 'vitest';
import { LANE_HOLDING_ATTEMPTS, laneHeadOf } from '../../webhook-delivery/lanes.js';

const row = (seq: number, attempts: number, next: number) => ({ seq, attempts, next_attempt_at: next });

describe('laneHeadOf', () => {
  it('starts the first row when it is due', () => {
    expect(laneHeadOf([row(1, 0, 0), row(2, 0, 0)], 1_000)).toEqual({ due: row(1, 0, 0) });
  });

  it('holds the lane behind a row waiting for its retry with fewer failures than the holding limit', () => {
    const waiting = row(1, LANE_HOLDING_ATTEMPTS - 1, 5_000);
    expect(laneHeadOf([waiting, row(2, 0, 0)], 1_000)).toEqual({ waitUntil: 5_000, held: true });
  });

  it('passes over a row that failed the holding limit of times, so later rows go', () => {
    const longFailing = row(1, LANE_HOLDING_ATTEMPTS, 9_000);
    expect(laneHeadOf([longFailing, row(2, 0, 0)], 1_000)).toEqual({ due: row(2, 0, 0) });
  });

  it('reports the earliest retry when only passed-over rows were read, and says the lane is not held', () => {
    expect(laneHeadOf([row(1, LANE_HOLDING_ATTEMPTS, 9_000), row(2, LANE_HOLDING_ATTEMPTS + 1, 7_000)], 1_000)).toEqual({ waitUntil: 7_000, held: false });
  });
});
