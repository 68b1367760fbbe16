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
