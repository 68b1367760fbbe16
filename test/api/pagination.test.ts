import { describe, expect, it } from 'vitest';
import { ListCursor, filterHash, idKey, sequenceKey, timeAndIdKey, withWindowEnd, type SortKey } from '../../api/pagination.js';
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
  const devices = new ListCursor('devices', idKey);
  const DEV = 'dev_01jbz3k8x6m2q9w4e7r5t1y0ha';

  it('no cursor means the first page', () => {
    expect(devices.for(filters).decode(undefined)).toBeNull();
  });

  it('refuses a cursor issued for other filters with cursor_mismatch', () => {
    const cursor = devices.for(filters).encode(DEV);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const err = refusal(() => devices.for({ device_id: null, group_id: 'grp_2' }).decode(cursor));
    expect(err.status).toBe(400);
    expect(err.code).toBe('cursor_mismatch');
    expect(err.errors).toEqual([{ pointer: '/query/cursor', message: 'belongs to a different list or filter set' }]);
  });

  it('refuses a cursor of another list with the same filters and sort key', () => {
    const geofences = new ListCursor('geofences', idKey);
    const err = refusal(() => new ListCursor('drivers', idKey).for({}).decode(geofences.for({}).encode('geo_01jbz3k8x6m2q9w4e7r5t1y0ha')));
    expect(err.code).toBe('cursor_mismatch');
  });

  it('refuses malformed cursors with invalid_cursor', () => {
    const bad = [
      'not a cursor!',
      Buffer.from('no separator').toString('base64url'),
      Buffer.from('~key').toString('base64url'),
      Buffer.from(`${filterHash('devices', filters)}~`).toString('base64url'),
    ];
    for (const cursor of bad) {
      const err = refusal(() => devices.for(filters).decode(cursor));
      expect(err.code).toBe('invalid_cursor');
      expect(err.errors[0]?.pointer).toBe('/query/cursor');
    }
  });

  it('tells lists and filter sets apart', () => {
    const sets = [{}, { a: null }, { a: 1 }, { a: '1' }, { a: [1, 2] }, { a: [2, 1] }, { device_id: ['x'], group_id: null }, { device_id: ['y'], group_id: null }];
    expect(new Set(sets.map((f) => filterHash('devices', f))).size).toBe(sets.length);
    expect(filterHash('devices', { a: 1 })).toBe(filterHash('devices', { a: 1 }));
    expect(filterHash('drivers', {})).not.toBe(filterHash('geofences', {}));
  });

  it('round-trips every sort key through a cursor', () => {
    const roundTrip = <K>(sortKey: SortKey<K>, key: K) => {
      const cursors = new ListCursor('list', sortKey);
      return cursors.for({ ...filters }).decode(cursors.for(filters).encode(key));
    };
    expect(roundTrip(idKey, DEV)).toBe(DEV);
    expect(roundTrip(timeAndIdKey, { t: 1793491200000, id: 'evt_01jbz3k8x6m2q9w4e7r5t1y0ha' })).toEqual({ t: 1793491200000, id: 'evt_01jbz3k8x6m2q9w4e7r5t1y0ha' });
    expect(roundTrip(timeAndIdKey, { t: 0, id: '0190f1e2-aaaa-8bbb-8ccc-123456789abc' })).toEqual({ t: 0, id: '0190f1e2-aaaa-8bbb-8ccc-123456789abc' });
    expect(roundTrip(sequenceKey, 42)).toBe(42);
    const windowed = { end: 1793577600000, key: { t: 1793491200000, id: '0190f1e2-aaaa-8bbb-8ccc-123456789abc' } };
    expect(roundTrip(withWindowEnd(timeAndIdKey), windowed)).toEqual(windowed);
  });

  it("reads a request's cursor and writes the next one with the filters as they were first hashed", () => {
    const request = devices.for(filters);
    const next = request.encode(DEV);
    expect(request.decode(next)).toBe(DEV);
    expect(devices.for({ ...filters }).decode(next)).toBe(DEV);
  });

  it('pages rows fetched with limit + 1: a cursor only when more wait', () => {
    const rows = ['dev_01jbz3k8x6m2q9w4e7r5t1y0ha', 'dev_01jbz3k8x6m2q9w4e7r5t1y0hb', 'dev_01jbz3k8x6m2q9w4e7r5t1y0hc'];
    const full = devices.for(filters).page(rows, 2, (r) => r);
    expect(full.data).toEqual(rows.slice(0, 2));
    expect(full.pagination.has_more).toBe(true);
    expect(devices.for(filters).decode(full.pagination.next_cursor!)).toBe(rows[1]);
    expect(devices.for(filters).page(rows, 3, (r) => r).pagination).toEqual({ next_cursor: null, has_more: false });
  });

  it('refuses a cursor with the right filters but a key its list could not have issued', () => {
    const forged = (key: string) => Buffer.from(`${filterHash('list', filters)}~${key}`).toString('base64url');
    const cases: Array<[SortKey<unknown>, string[]]> = [
      [idKey, ['zzz', 'dev_', 'dev_01jbz3k8x6m2q9w4e7r5t1y0h', 'DEV_01JBZ3K8X6M2Q9W4E7R5T1Y0HA', 'dev_01jbz3k8x6m2q9w4e7r5t1y0ha|1']],
      [timeAndIdKey, ['abc', '12', '12|', '|evt', '12|evt', '12|evt_01jbz3k8x6m2q9w4e7r5t1y0h', '12|0190F1E2-AAAA-8BBB-8CCC-123456789ABC', 'NaN|evt_01jbz3k8x6m2q9w4e7r5t1y0ha', ' 12|evt_01jbz3k8x6m2q9w4e7r5t1y0ha', '0x1f|evt_01jbz3k8x6m2q9w4e7r5t1y0ha', '1e3|evt_01jbz3k8x6m2q9w4e7r5t1y0ha', '-5|evt_01jbz3k8x6m2q9w4e7r5t1y0ha', '99999999999999999|evt_01jbz3k8x6m2q9w4e7r5t1y0ha']],
      [sequenceKey, ['', 'x', '-1', '1.5', '1e3', '9007199254740993']],
      [withWindowEnd(timeAndIdKey), ['12|evt', 'x|12|evt', '12|x|evt', '12|12|']],
    ];
    for (const [sortKey, keys] of cases) {
      const cursors = new ListCursor('list', sortKey);
      for (const key of keys) {
        const err = refusal(() => cursors.for(filters).decode(forged(key)));
        expect(err.code, key).toBe('invalid_cursor');
        expect(err.errors).toEqual([{ pointer: '/query/cursor', message: 'is malformed' }]);
      }
    }
  });
});
