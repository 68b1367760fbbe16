/** Position history queries; every one is scoped to the customer. */
import type Database from 'better-sqlite3';
import { stmt } from './statements.js';
import { boundLimit } from '../../core/sqlite-limit.js';

/** A sort key of the history: fix time, ties broken by the PositionRecorded's id. */
export interface HistoryKey {
  t: number;
  id: string;
}

export interface HistoryPage {
  /** The page's items, each already the API's JSON (projections/history), joined by commas; null for an empty page. */
  items: Buffer | null;
  /** The key of the page's last item when another item follows it in the window (the next page's cursor), else null. */
  next: HistoryKey | null;
}

/** What a history page's read asks: one device's fixes in [from, to), after a key, in one order. */
export interface HistoryPageQuery {
  customerId: string;
  deviceId: string;
  from: number;
  to: number;
  after: HistoryKey | null;
  limit: number;
  order: 'asc' | 'desc';
}

/**
 * Position history of one device in [from, to), keyset-paginated on (fix_time, event_id).
 * One statement, so both parts read one snapshot: the page's stored JSON joined by SQLite
 * (one range scan of the clustered table, one buffer back instead of a JS value per row and
 * column), and the keys of the page's last row and of the row after it, if any (the same
 * range, from the page's end). Every row is the customer's (its customer_id is matched), so
 * a page with items is of the customer's device; an empty page says nothing about the device
 * (customerHasDevice tells an unknown or foreign one from a quiet window). It runs in the
 * history pages' thread (api/history-pages.ts).
 */
export function historyPage(historyDb: Database.Database, q: HistoryPageQuery): HistoryPage {
  const asc = q.order === 'asc';
  const cmp = asc ? '>' : '<';
  const dir = asc ? 'ASC' : 'DESC';
  const range = `FROM positions WHERE device_id = @device AND customer_id = @customer AND fix_time >= @from AND fix_time < @to
    ${q.after ? `AND (fix_time ${cmp} @t OR (fix_time = @t AND event_id ${cmp} @id))` : ''}
    ORDER BY fix_time ${dir}, event_id ${dir}`;
  // group_concat takes the subquery's rows in its ORDER BY order (a subquery with LIMIT is never flattened
  // into an aggregate); test/api/positions.test.ts checks every page of both orders byte for byte.
  const rows = stmt(
    historyDb,
    `SELECT 0, CAST(group_concat(item, ',') AS BLOB), NULL, NULL FROM (SELECT item ${range} LIMIT ${boundLimit('@limit')})
     UNION ALL
     SELECT 1, NULL, fix_time, event_id FROM (SELECT fix_time, event_id ${range} LIMIT 2 OFFSET @limit - 1)`,
    'raw',
  ).all({
    device: q.deviceId,
    customer: q.customerId,
    from: q.from,
    to: q.to,
    limit: q.limit,
    ...(q.after ? { t: q.after.t, id: q.after.id } : {}),
  }) as Array<[0, Buffer | null, null, null] | [1, null, number, string]>;
  let items: Buffer | null = null;
  const keys: HistoryKey[] = [];
  for (const r of rows) {
    if (r[0] === 0) items = r[1];
    else keys.push({ t: r[2], id: r[3] });
  }
  // Two keys: the page is full and another row follows; the page ends on the earlier one in the walk's order.
  if (items === null || keys.length < 2) return { items, next: null };
  const [a, b] = keys as [HistoryKey, HistoryKey];
  const aFirst = a.t < b.t || (a.t === b.t && a.id < b.id);
  return { items, next: aFirst === asc ? a : b };
}

/** Whether the customer has this device (in the other read models' database): an empty history page's 404 or 200. */
export function customerHasDevice(readModelDb: Database.Database, customerId: string, deviceId: string): boolean {
  return stmt(readModelDb, 'SELECT 1 FROM devices WHERE device_id = ? AND customer_id = ?').get(deviceId, customerId) !== undefined;
}
