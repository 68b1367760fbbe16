import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, filterHash, idKey, sequenceKey, timeAndIdKey, withWindowEnd, type SortKey } from '../../api/pagination.js';
import { ApiError } from '../../api/problem.js';

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('cursors', () => {
  const filters = { device_id: null, group_id: 'grp_1' };

  it('round-trips sort keys, including separators and non-ASCII text', () => {
    for (const key of ['dev_01abc', '1793491200000|evt_01x', 'a~b~c', 'Fahrzeug Köln ✓', '42']) {
      const cursor = encodeCursor(key, filters);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor(cursor, { ...filters })).toBe(key);
    }
  });

  it('no cursor means the first page', () => {
    expect(decodeCursor(undefined, filters)).toBeNull();
  });

  it('refuses a cursor issued for other filters with cursor_mismatch', () => {
    const cursor = encodeCursor('dev_1', filters);
    const err = refusal(() => decodeCursor(cursor, { device_id: null, group_id: 'grp_2' }));
    expect(err.status).toBe(400);
    expect(err.code).toBe('cursor_mismatch');
    expect(err.errors).toEqual([{ pointer: '/query/cursor', message: 'belongs to a different filter set' }]);
  });

  it('refuses malformed cursors with invalid_cursor', () => {
    const bad = ['not a cursor!', Buffer.from('no separator').toString('base64url'), Buffer.from('~key').toString('base64url'), Buffer.from(`${filterHash(filters)}~`).toString('base64url')];
    for (const cursor of bad) {
      const err = refusal(() => decodeCursor(cursor, filters));
      expect(err.code).toBe('invalid_cursor');
      expect(err.errors[0]?.pointer).toBe('/query/cursor');
    }
  });

  it('tells filter sets apart', () => {
    const sets = [{}, { a: null }, { a: 1 }, { a: '1' }, { a: [1, 2] }, { a: [2, 1] }, { device_id: ['x'], group_id: null }, { device_id: ['y'], group_id: null }];
    expect(new Set(sets.map(filterHash)).size).toBe(sets.length);
    expect(filterHash({ a: 1 })).toBe(filterHash({ a: 1 }));
  });

  it('round-trips every sort key through a cursor', () => {
    const roundTrip = <K>(sortKey: SortKey<K>, key: K) => decodeCursor(encodeCursor(key, filters, sortKey), { ...filters }, sortKey);
    expect(roundTrip(idKey, 'dev_01jbz3k8x6m2q9w4e7r5t1y0ha')).toBe('dev_01jbz3k8x6m2q9w4e7r5t1y0ha');
    expect(roundTrip(timeAndIdKey, { t: 1793491200000, id: 'evt_01jbz3k8x6m2q9w4e7r5t1y0ha' })).toEqual({ t: 1793491200000, id: 'evt_01jbz3k8x6m2q9w4e7r5t1y0ha' });
    expect(roundTrip(timeAndIdKey, { t: 0, id: '0190f1e2-aaaa-8bbb-8ccc-123456789abc' })).toEqual({ t: 0, id: '0190f1e2-aaaa-8bbb-8ccc-123456789abc' });
    expect(roundTrip(sequenceKey, 42)).toBe(42);
    const windowed = { end: 1793577600000, key: { t: 1793491200000, id: 'a|b' } };
    expect(roundTrip(withWindowEnd(timeAndIdKey), windowed)).toEqual(windowed);
  });

  it('refuses a cursor with the right filters but a key its list could not have issued', () => {
    const forged = (key: string) => Buffer.from(`${filterHash(filters)}~${key}`).toString('base64url');
    const cases: Array<[SortKey<unknown>, string[]]> = [
      [idKey, ['zzz', 'dev_', 'dev_01jbz3k8x6m2q9w4e7r5t1y0h', 'DEV_01JBZ3K8X6M2Q9W4E7R5T1Y0HA', 'dev_01jbz3k8x6m2q9w4e7r5t1y0ha|1']],
      [timeAndIdKey, ['abc', '12', '12|', '|evt', 'NaN|evt', ' 12|evt', '0x1f|evt', '1e3|evt', '-5|evt', '99999999999999999|evt']],
      [sequenceKey, ['', 'x', '-1', '1.5', '1e3', '9007199254740993']],
      [withWindowEnd(timeAndIdKey), ['12|evt', 'x|12|evt', '12|x|evt', '12|12|']],
    ];
    for (const [sortKey, keys] of cases) {
      for (const key of keys) {
        const err = refusal(() => decodeCursor(forged(key), filters, sortKey));
        expect(err.code, key).toBe('invalid_cursor');
        expect(err.errors).toEqual([{ pointer: '/query/cursor', message: 'is malformed' }]);
      }
    }
  });
});
