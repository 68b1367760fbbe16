import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { ownsEndpoint } from '../../../projections/webhooks/feed.js';

describe('webhook shards', () => {
  it('gives every endpoint to exactly one of n nodes, spread evenly, and all of them to a single node', () => {
    const ids = Array.from({ length: 3000 }, (_, i) => newId('whk', 1_700_000_000_000 + i));
    const count = 3;
    const perShard = [0, 1, 2].map((index) => ids.filter((id) => ownsEndpoint({ index, count }, id)).length);
    for (const id of ids) expect([0, 1, 2].filter((index) => ownsEndpoint({ index, count }, id))).toHaveLength(1);
    for (const n of perShard) expect(n).toBeGreaterThan(800);
    expect(ids.every((id) => ownsEndpoint({ index: 0, count: 1 }, id))).toBe(true);
  });
});
