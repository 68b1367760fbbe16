/** The conformance corpus in test/fixtures/conformance: its size and protocols, which the per-protocol tests count on. */
import { describe, expect, it } from 'vitest';
import { loadFrames } from '../support/conformance.js';

describe('conformance corpus', () => {
  it('holds 355 frames of the three protocols', () => {
    const frames = loadFrames();
    expect(frames).toHaveLength(355);
    expect(new Set(frames.map((f) => f.protocol))).toEqual(new Set(['teltonika', 'gt06', 'jt808']));
  });
});
