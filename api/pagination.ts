/**
 * Opaque cursors: base64url of the last row's sort key and a hash of the
 * filters, so a cursor reused with other filters is refused (cursor_mismatch).
 */
import { createHash } from 'node:crypto';
import { ApiError } from './problem.js';

export function filterHash(filters: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(filters)).digest('base64url').slice(0, 12);
}

export function encodeCursor(key: string, filters: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify({ k: key, f: filterHash(filters) })).toString('base64url');
}

export function decodeCursor(cursor: string | undefined, filters: Record<string, unknown>): string | null {
  if (cursor === undefined) return null;
  let parsed: { k?: unknown; f?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as typeof parsed;
  } catch {
    throw new ApiError(400, 'invalid_cursor', 'The cursor is not one this API issued.', [
      { pointer: '/query/cursor', message: 'is malformed' },
    ]);
  }
  if (typeof parsed.k !== 'string' || typeof parsed.f !== 'string') {
    throw new ApiError(400, 'invalid_cursor', 'The cursor is not one this API issued.', [
      { pointer: '/query/cursor', message: 'is malformed' },
    ]);
  }
  if (parsed.f !== filterHash(filters)) {
    throw new ApiError(400, 'cursor_mismatch', 'The cursor was issued for other filters; start again without it.', [
      { pointer: '/query/cursor', message: 'belongs to a different filter set' },
    ]);
  }
  return parsed.k;
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
