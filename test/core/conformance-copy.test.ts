/** The corpus copy in test/fixtures must stay the one in shared/ (when shared/ is beside the clone). */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FIXTURE_PATH, SHARED_PATH, loadFrames } from '../support/conformance.js';

describe('conformance corpus', () => {
  it('holds 355 frames of the three protocols', () => {
    const frames = loadFrames();
    expect(frames).toHaveLength(355);
    expect(new Set(frames.map((f) => f.protocol))).toEqual(new Set(['teltonika', 'gt06', 'jt808']));
  });

  it.runIf(existsSync(SHARED_PATH))('matches shared/conformance/frames.json', () => {
    expect(readFileSync(FIXTURE_PATH, 'utf8')).toBe(readFileSync(SHARED_PATH, 'utf8'));
  });
});
