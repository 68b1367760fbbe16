/**
 * Opaque cursors: base64url of a hash of the filters and the last row's sort
 * key, so a cursor reused with other filters is refused (cursor_mismatch).
 * Each list names its sort key (a `SortKey`), which says how the key is
 * written and checks it when read back: a cursor this API could not have
 * issued is a 400 invalid_cursor, never a quietly empty or shifted page.
 */
import { ApiError } from './problem.js';

/** How a list's sort key is written into a cursor and read back; `parse` returns null for text no page could have ended on. */
export interface SortKey<K> {
  format(key: K): string;
  parse(text: string): K | null;
}

/** Our ids: a prefix and a lowercase ULID (core/ids.ts). */
const ID = /^[a-z]{3}_[0-9a-hjkmnp-tv-z]{26}$/;
/** Ids of stored events (positions are listed by the id of their PositionRecorded). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Milliseconds and sequence numbers: digits only (Number() would also take '', ' 1', '0x1f', '1e3'). */
const WHOLE = /^\d{1,16}$/;

function whole(text: string): number | null {
  if (!WHOLE.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** Lists in id order (devices, drivers, keys, latest positions by device). */
export const idKey: SortKey<string> = {
  format: (id) => id,
  parse: (text) => (ID.test(text) ? text : null),
};

/** Lists in time order, named by time and id: an event id (events, ties broken by it) or a stored event's UUID (position history, ties in the order stored). */
export const timeAndIdKey: SortKey<{ t: number; id: string }> = {
  format: (k) => `${k.t}|${k.id}`,
  parse(text) {
    const bar = text.indexOf('|');
    const t = bar < 0 ? null : whole(text.slice(0, bar));
    const id = text.slice(bar + 1);
    return t === null || !(ID.test(id) || UUID.test(id)) ? null : { t, id };
  },
};

/** Lists in log order (the feed). */
export const sequenceKey: SortKey<number> = {
  format: (n) => String(n),
  parse: whole,
};

/**
 * A sort key preceded by the end of the window the walk started with, for
 * lists whose `to` defaults to now: every page of a walk then reads the same
 * window, however long the client takes between pages.
 */
export function withWindowEnd<K>(inner: SortKey<K>): SortKey<{ end: number; key: K }> {
  return {
    format: (k) => `${k.end}|${inner.format(k.key)}`,
    parse(text) {
      const bar = text.indexOf('|');
      const end = bar < 0 ? null : whole(text.slice(0, bar));
      const key = end === null ? null : inner.parse(text.slice(bar + 1));
      return end === null || key === null ? null : { end, key };
    },
  };
}

/**
 * FNV-1a (32 bits) of the list's name and the filters' JSON, with its length.
 * It only tells lists and filter sets apart (the tenant is checked on every
 * query, never taken from a cursor), so it needs no cryptographic strength,
 * and every paginated response computes it.
 */
export function filterHash(list: string, filters: Record<string, unknown>): string {
  const text = list + JSON.stringify(filters);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return (h >>> 0).toString(36) + '.' + text.length.toString(36);
}

/** Between the filter hash (which never contains it) and the sort key (which may contain anything). */
const SEPARATOR = '~';
const BASE64URL = /^[A-Za-z0-9_-]+$/;

function malformed(): ApiError {
  return new ApiError(400, 'invalid_cursor', 'The cursor is not one this API issued.', [{ pointer: '/query/cursor', message: 'is malformed' }]);
}

/**
 * The cursors of one list: its name goes into the hash, so a cursor of
 * another list (even one without filters) is a cursor_mismatch, never a
 * silently empty page; its sort key checks what comes back.
 */
export class ListCursor<K> {
  constructor(
    private readonly list: string,
    private readonly sortKey: SortKey<K>,
  ) {}

  /** The cursors of one request's filters. */
  for(filters: Record<string, unknown>): FilteredCursor<K> {
    return new FilteredCursor(this.list, filters, this.sortKey);
  }
}

/**
 * A list's cursors for one set of filters, as a request reads its cursor and
 * writes the next one: the filters' hash is worked out once, when first needed
 * (a first page without more after it needs none).
 */
export class FilteredCursor<K> {
  private hash: string | null = null;

  constructor(
    private readonly list: string,
    private readonly filters: Record<string, unknown>,
    private readonly sortKey: SortKey<K>,
  ) {}

  private filterHash(): string {
    return (this.hash ??= filterHash(this.list, this.filters));
  }

  encode(key: K): string {
    return Buffer.from(this.filterHash() + SEPARATOR + this.sortKey.format(key)).toString('base64url');
  }

  /** The sort key the previous page ended on; null without a cursor. */
  decode(cursor: string | undefined): K | null {
    if (cursor === undefined) return null;
    if (!BASE64URL.test(cursor)) throw malformed();
    const text = Buffer.from(cursor, 'base64url').toString('utf8');
    const at = text.indexOf(SEPARATOR);
    if (at <= 0 || at === text.length - 1) throw malformed();
    if (text.slice(0, at) !== this.filterHash()) {
      throw new ApiError(400, 'cursor_mismatch', 'The cursor was issued for another list or other filters; start again without it.', [
        { pointer: '/query/cursor', message: 'belongs to a different list or filter set' },
      ]);
    }
    const key = this.sortKey.parse(text.slice(at + 1));
    if (key === null) throw malformed();
    return key;
  }

  /** The page envelope from rows fetched with limit + 1; `keyOf` gives the sort key of the last row. */
  page<T>(rows: T[], limit: number, keyOf: (row: T) => K): ListPage<T> {
    const hasMore = rows.length > limit;
    const data = hasMore ? rows.slice(0, limit) : rows;
    const last = data[data.length - 1];
    return { data, pagination: { next_cursor: hasMore && last ? this.encode(keyOf(last)) : null, has_more: hasMore } };
  }
}

export interface ListPage<T> {
  data: T[];
  pagination: { next_cursor: string | null; has_more: boolean };
}
