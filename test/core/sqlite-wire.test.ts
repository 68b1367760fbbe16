import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { BatchText, decodeBatch, encodeOutcomes, outcomeAt, type EventForBatch, type WireAppend } from '../../core/event-store/sqlite-wire.js';

/** The batch text of appends given as the store receives them. */
function batchOf(appends: Array<{ stream: string; expected: string; created: number; events: EventForBatch[] }>): string {
  const text = new BatchText();
  for (const a of appends) text.add(a.stream, a.expected, a.created, a.events);
  return text.take();
}

describe('SQLite writer wire format', () => {
  it('carries appends through one string unchanged, whatever JSON they hold', () => {
    const note = { note: 'tab\there, newline\n, \u001f and \u001e, ünïcode 🚚' };
    const text = batchOf([
      {
        stream: 'telemetry-dev_1',
        expected: 'any',
        created: 1_790_000_000_123,
        events: [
          { id: 'a', type: 'PositionRecorded', data: note },
          { id: 'b', type: 'StatusReported', metadata: { k: 1 }, data: {} },
        ],
      },
      { stream: 'tenant-cus_1', expected: '41', created: 0, events: [] },
      { stream: 'device-dev_2', expected: 'no_stream', created: 5, events: [{ id: 'c', type: 'DeviceRegistered', data: '' }] },
    ]);
    const expected: WireAppend[] = [
      {
        stream: 'telemetry-dev_1',
        expected: 'any',
        created: 1_790_000_000_123,
        events: [
          { id: 'a', type: 'PositionRecorded', metadata: '{}', data: JSON.stringify(note) },
          { id: 'b', type: 'StatusReported', metadata: '{"k":1}', data: '{}' },
        ],
      },
      { stream: 'tenant-cus_1', expected: '41', created: 0, events: [] },
      { stream: 'device-dev_2', expected: 'no_stream', created: 5, events: [{ id: 'c', type: 'DeviceRegistered', metadata: '{}', data: '""' }] },
    ];
    expect(decodeBatch(text)).toEqual(expected);
  });

  it('starts a new batch after each take, and after a clear', () => {
    const text = new BatchText();
    text.add('s1', 'any', 1, [{ id: 'a', type: 't', data: { n: 1 } }]);
    expect(decodeBatch(text.take()).map((a) => a.stream)).toEqual(['s1']);
    expect(text.take()).toBe('');
    text.add('dropped', 'any', 1, []);
    text.clear();
    text.add('s2', 'any', 2, [{ id: 'b', type: 't', data: { n: 2 } }]);
    expect(decodeBatch(text.take())).toEqual([{ stream: 's2', expected: 'any', created: 2, events: [{ id: 'b', type: 't', metadata: '{}', data: '{"n":2}' }] }]);
  });

  it('decodes stream names that do not keep the batch\'s text alive (the writer keeps them for as long as it runs)', () => {
    // A full collection on demand, in this forked test process only.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const data = { attributes: 'x'.repeat(2_000) };
    const names = new Map<string, number>();
    gc();
    const before = process.memoryUsage().heapUsed;
    // 400 batches of 20 appends, about 40 KB of text each: 16 MB in all, of which only the 8,000 names are kept.
    for (let b = 0; b < 400; b++) {
      const appends = Array.from({ length: 20 }, (_, i) => ({
        stream: `telemetry-dev_${String(b).padStart(4, '0')}_${String(i).padStart(2, '0')}`,
        expected: 'any',
        created: b,
        events: [{ id: `${b}-${i}`, type: 'PositionRecorded', data }],
      }));
      for (const append of decodeBatch(batchOf(appends))) names.set(append.stream, b);
    }
    gc();
    const kept = process.memoryUsage().heapUsed - before;
    expect(names.size).toBe(8_000);
    // The names and the map take well under 2 MB; the batches' text would be 16 MB.
    expect(kept).toBeLessThan(4 * 1024 * 1024);
  });

  it('refuses names, ids and data that would break the framing, and keeps the batch as it was', () => {
    const text = new BatchText();
    text.add('before', 'any', 0, [{ id: 'a', type: 't', data: {} }]);
    expect(() => text.add('a\u001fb', 'any', 0, [])).toThrow(/control character/);
    expect(() => text.add('s', 'any', 0, [{ id: 'ok', type: 't', data: {} }, { id: 'x\u001e', type: 't', data: {} }])).toThrow(/control character/);
    expect(() => text.add('s', 'any', 0, [{ id: 'ok', type: 't', data: {} }, { id: 'y', type: 't', data: undefined }])).toThrow(/no JSON data/);
    expect(() => text.add('s', 'any', 0, [{ id: 'z', type: 't', data: { n: 1n } }])).toThrow(/BigInt/);
    text.add('after', 'any', 1, []);
    expect(decodeBatch(text.take()).map((a) => [a.stream, a.events.map((e) => e.id)])).toEqual([
      ['before', ['a']],
      ['after', []],
    ]);
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
