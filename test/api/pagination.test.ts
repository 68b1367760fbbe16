import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, filterHash } from '../../api/pagination.js';
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
});
