/**
 * BatchRows keeps a projection's rows in memory between batches: read from the
 * table once, written once per batch that changed them, and dropped with a batch
 * that rolled back (the table, not the rolled-back value, is read again).
 * BatchLookup remembers a device's driver and limit the same way, and forgets
 * them at any event that may change them.
 */
import { describe, expect, it } from 'vitest';
import { BatchLookup, BatchRows } from '../../projections/batch-rows.js';

/** A table as a map, counting the reads and writes BatchRows makes of it. */
function table(initial: Record<string, number>) {
  const rows = new Map(Object.entries(initial));
  const calls = { loads: 0, saves: 0 };
  const batch = new BatchRows<string, number>(
    (key) => {
      calls.loads++;
      return rows.get(key) ?? null;
    },
    (key, value) => {
      calls.saves++;
      rows.set(key, value);
    },
  );
  return { rows, calls, batch };
}

describe('BatchRows', () => {
  it('reads a row once and writes it once per batch that changed it, keeping it for the next batches', () => {
    const t = table({ a: 1 });
    expect(t.batch.get('a')).toBe(1);
    t.batch.set('a', 2);
    t.batch.set('a', 3);
    t.batch.flush();
    expect(t.rows.get('a')).toBe(3);
    expect(t.calls).toEqual({ loads: 1, saves: 1 });
    // The next batch: no read, and nothing written if nothing changed.
    expect(t.batch.get('a')).toBe(3);
    t.batch.flush();
    expect(t.calls).toEqual({ loads: 1, saves: 1 });
  });

  it('remembers a missing row as missing until a batch sets it', () => {
    const t = table({});
    expect(t.batch.get('b')).toBeNull();
    t.batch.flush();
    expect(t.batch.get('b')).toBeNull();
    expect(t.calls.loads).toBe(1);
  });

  it('drops what a rolled-back batch changed: the table is read again', () => {
    const t = table({ a: 1 });
    expect(t.batch.get('a')).toBe(1);
    t.batch.flush();
    t.batch.set('a', 2);
    t.batch.discard();
    expect(t.batch.get('a')).toBe(1);
    expect(t.calls).toEqual({ loads: 2, saves: 0 });
  });

  it('keeps a row its caller wrote itself without writing it again', () => {
    const t = table({ a: 1 });
    t.batch.keep('a', 5);
    t.batch.flush();
    expect(t.batch.get('a')).toBe(5);
    expect(t.calls).toEqual({ loads: 0, saves: 0 });
  });

  it('reads rows again once it holds more than its bound', () => {
    const t = table({});
    for (let i = 0; i <= 50_000; i++) t.batch.set(`d${i}`, i);
    t.batch.flush();
    expect(t.batch.get('d7')).toBe(7);
    expect(t.calls.loads).toBe(1);
  });
});

describe('BatchLookup', () => {
  function lookup() {
    const calls: string[] = [];
    const values = new Map([['dev_a', 50]]);
    const memo = new BatchLookup<number | null>((deviceId) => {
      calls.push(deviceId);
      return values.get(deviceId) ?? null;
    });
    return { calls, values, memo };
  }

  it('looks a device up once across batches while only telemetry is seen', () => {
    const l = lookup();
    l.memo.seen('PositionRecorded');
    expect(l.memo.get('dev_a')).toBe(50);
    l.memo.flush();
    l.memo.seen('AlarmReported');
    expect(l.memo.get('dev_a')).toBe(50);
    expect(l.calls).toEqual(['dev_a']);
  });

  it('forgets at any other event, in this batch or a later one', () => {
    const l = lookup();
    expect(l.memo.get('dev_a')).toBe(50);
    l.memo.flush();
    l.values.set('dev_a', 90);
    l.memo.seen('DeviceUpdated');
    expect(l.memo.get('dev_a')).toBe(90);
    expect(l.calls).toEqual(['dev_a', 'dev_a']);
  });

  it('forgets what a rolled-back batch looked up', () => {
    const l = lookup();
    expect(l.memo.get('dev_a')).toBe(50);
    l.memo.discard();
    expect(l.memo.get('dev_a')).toBe(50);
    expect(l.calls).toEqual(['dev_a', 'dev_a']);
  });
});
