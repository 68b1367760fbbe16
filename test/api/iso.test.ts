import { describe, expect, it } from 'vitest';
import { iso } from '../../api/schemas/common.js';

describe('iso', () => {
  it('writes exactly what toISOString writes, across days, leap years, fractions and the edges', () => {
    const samples = [
      0, 1, 999, 1000, 59_999, 86_399_999, 86_400_000, 951_782_400_000 /* 2000-02-29 */, 1_709_164_799_999, 4_107_542_399_999,
      253_402_300_799_999, 253_402_300_800_000, -1, -86_400_001, 1.5, 1_790_000_000_000.9,
    ];
    let x = 123_456_789;
    for (let i = 0; i < 20_000; i++) {
      x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
      samples.push(Date.UTC(1970 + (x % 120), 0, 1) + ((x * 7919) % (366 * 86_400_000)));
    }
    for (const ms of samples) expect(iso(ms), String(ms)).toBe(new Date(ms).toISOString());
    expect(iso(null)).toBeNull();
  });
});
