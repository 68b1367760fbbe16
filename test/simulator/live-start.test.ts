import { describe, expect, it } from 'vitest';
import { liveStartTime } from './run.js';

const NOW = Date.UTC(2026, 10, 23, 14, 0, 0, 400);
const SECOND = Date.UTC(2026, 10, 23, 14, 0, 0);

describe('liveStartTime', () => {
  it('starts now when the fleet sends at most one point a second (its fixes stay behind the clock)', () => {
    expect(liveStartTime(NOW, { intervalMs: 1000, pointsPerFrame: 1, durationS: 30 })).toBe(SECOND);
    expect(liveStartTime(NOW, { intervalMs: 5000, pointsPerFrame: 2, durationS: 30 })).toBe(SECOND);
  });

  it('starts as far back as a faster fleet gets ahead, so its last fix lands at about now', () => {
    // 200 ms a frame of 1 point: 5 simulated seconds a second; 30 s of it covers 150 s, 120 s ahead.
    const start = liveStartTime(NOW, { intervalMs: 200, pointsPerFrame: 1, durationS: 30 });
    expect(start).toBe(SECOND - 120_000);
    expect(start + 150_000).toBe(SECOND + 30_000); // the last point's time = when the run ends
    expect(liveStartTime(NOW, { intervalMs: 1000, pointsPerFrame: 10, durationS: 60 })).toBe(SECOND - 540_000);
  });

  it('starts a day back when frames go as fast as acks come (interval 0)', () => {
    expect(liveStartTime(NOW, { intervalMs: 0, pointsPerFrame: 1, durationS: 10 })).toBe(SECOND - 86_400_000);
  });
});
