/**
 * Opaque cursors: base64url of a hash of the filters and the last row's sort
 * key, so a cursor reused with other filters is refused (cursor_mismatch).
 */
import { ApiError } from './problem.js';

/**
 * FNV-1a (32 bits) of the filters' JSON, with its length. It only tells filter
 * sets apart (the tenant is checked on every query, never taken from a cursor),
 * so it needs no cryptographic strength, and every paginated response computes it.
 */
export function filterHash(filters: Record<string, unknown>): string {
  const text = JSON.stringify(filters);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return (h >>> 0).toString(36) + '.' + text.length.toString(36);
}

/** Between the filter hash (which never contains it) and the sort key (which may contain anything). */
const SEPARATOR = '~';

export function encodeCursor(key: string, filters: Record<string, unknown>): string {
  return Buffer.from(filterHash(filters) + SEPARATOR + key).toString('base64url');
}

function malformed(): ApiError {
  return new ApiError(400, 'invalid_cursor', 'The cursor is not one this API issued.', [{ pointer: '/query/cursor', message: 'is malformed' }]);
}

export function decodeCursor(cursor: string | undefined, filters: Record<string, unknown>): string | null {
  if (cursor === undefined) return null;
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw malformed();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const at = text.indexOf(SEPARATOR);
  if (at <= 0 || at === text.length - 1) throw malformed();
  if (text.slice(0, at) !== filterHash(filters)) {
    throw new ApiError(400, 'cursor_mismatch', 'The cursor was issued for other filters; start again without it.', [
      { pointer: '/query/cursor', message: 'belongs to a different filter set' },
    ]);
  }
  return text.slice(at + 1);
}

/** Builds the page envelope from rows fetched with limit + 1. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => string, filters: Record<string, unknown>) {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  const last = data[data.length - 1];
  return {
    data,
    pagination: { next_cursor: hasMore && last ? encodeCursor(keyOf(last), filters) : null, has_more: hasMore },
  };
}
