import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { decodeBatch, encodeBatch, encodeOutcomes, outcomeAt, type WireAppend } from '../../core/event-store/sqlite-wire.js';

describe('SQLite writer wire format', () => {
  it('carries appends through one string unchanged, whatever JSON they hold', () => {
    const appends: WireAppend[] = [
      {
        stream: 'telemetry-dev_1',
        expected: 'any',
        created: 1_790_000_000_123,
        events: [
          { id: 'a', type: 'PositionRecorded', metadata: '{}', data: JSON.stringify({ note: 'tab\there, newline\n, \u001f and \u001e, ünïcode 🚚' }) },
          { id: 'b', type: 'StatusReported', metadata: JSON.stringify({ k: 1 }), data: '{}' },
        ],
      },
      { stream: 'tenant-cus_1', expected: '41', created: 0, events: [] },
      { stream: 'device-dev_2', expected: 'no_stream', created: 5, events: [{ id: 'c', type: 'DeviceRegistered', metadata: '{}', data: '""' }] },
    ];
    expect(decodeBatch(encodeBatch(appends))).toEqual(appends);
  });

  it('decodes stream names that do not keep the batch\'s text alive (the writer keeps them for as long as it runs)', () => {
    // A full collection on demand, in this forked test process only.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const data = JSON.stringify({ attributes: 'x'.repeat(2_000) });
    const names = new Map<string, number>();
    gc();
    const before = process.memoryUsage().heapUsed;
    // 400 batches of 20 appends, about 40 KB of text each: 16 MB in all, of which only the 8,000 names are kept.
    for (let b = 0; b < 400; b++) {
      const appends: WireAppend[] = Array.from({ length: 20 }, (_, i) => ({
        stream: `telemetry-dev_${String(b).padStart(4, '0')}_${String(i).padStart(2, '0')}`,
        expected: 'any',
        created: b,
        events: [{ id: `${b}-${i}`, type: 'PositionRecorded', metadata: '{}', data }],
      }));
      for (const append of decodeBatch(encodeBatch(appends))) names.set(append.stream, b);
    }
    gc();
    const kept = process.memoryUsage().heapUsed - before;
    expect(names.size).toBe(8_000);
    // The names and the map take well under 2 MB; the batches' text would be 16 MB.
    expect(kept).toBeLessThan(4 * 1024 * 1024);
  });

  it('refuses names and ids that would break the framing', () => {
    expect(() => encodeBatch([{ stream: 'a\u001fb', expected: 'any', created: 0, events: [] }])).toThrow(/control character/);
    expect(() =>
      encodeBatch([{ stream: 's', expected: 'any', created: 0, events: [{ id: 'x\u001e', type: 't', metadata: '{}', data: '{}' }] }]),
    ).toThrow(/control character/);
  });

  it('packs outcomes, failures included', () => {
    const packed = encodeOutcomes([
      { ok: true, revision: 3, position: 1001 },
      { ok: false, current: -1 },
      { ok: false, current: 7 },
    ]);
    expect([0, 1, 2].map((i) => outcomeAt(packed, i))).toEqual([
      { ok: true, revision: 3, position: 1001 },
      { ok: false, current: -1 },
      { ok: false, current: 7 },
    ]);
  });
});
