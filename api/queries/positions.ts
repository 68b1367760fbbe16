/** Position history queries; every one is scoped to the customer. */
import type Database from 'better-sqlite3';
import { stmt } from './statements.js';
import { boundLimit } from '../../core/sqlite-limit.js';
import { HISTORY_EPOCH_MS, HISTORY_LAST_FIX_MS, HISTORY_SLOTS, deviceBaseSql, keyFixTimeSql, keySlotSql, keySql } from '../../projections/history/key.js';

/** Where a walk of the history stands: the fix time and the PositionRecorded's id of the last row it read. */
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
 * Position history of one device in [from, to), keyset-paginated on the history's key
 * (projections/history/key.ts: the device, its fixes' times, their slots), which the cursor
 * names by fix time and event id. One statement (after the device's number), so both parts read one snapshot: the page's
 * stored JSON joined by SQLite (one range scan of the clustered table, one buffer back instead
 * of a JS value per row and column), and the fix time, id and slot of the page's last row and
 * of the row after it, if any (the same range, from the page's end). Every row is the
 * customer's (its customer_id is matched), so a page with items is of the customer's device;
 * an empty page says nothing about the device (customerHasDevice tells an unknown or foreign
 * one from a quiet window). It runs in the history pages' thread (api/history-pages.ts).
 */
export function historyPage(historyDb: Database.Database, q: HistoryPageQuery): HistoryPage {
  // Times a key cannot hold have no rows: the window is cut to what it can.
  const from = Math.max(q.from, HISTORY_EPOCH_MS);
  const to = Math.min(q.to, HISTORY_LAST_FIX_MS + 1);
  // A device's number never changes once given, so it is read apart from the page.
  const num = (stmt(historyDb, 'SELECT num FROM history_devices WHERE device_id = ?', 'raw').get(q.deviceId) as [number] | undefined)?.[0];
  if (num === undefined || from >= to) return { items: null, next: null };
  const asc = q.order === 'asc';
  const dir = asc ? 'ASC' : 'DESC';
  // After the cursor's row, found by its id among the slots of its millisecond (were it gone, after the whole millisecond).
  // One bound per side, so that SQLite seeks to it (a second lower bound is only a filter: the walk started at `from`).
  const lo = keySql(deviceBaseSql('@num'), '@from');
  const hi = keySql(deviceBaseSql('@num'), '@to');
  const at = keySql(deviceBaseSql('@num'), '@t');
  const cursorRow = `(SELECT k FROM positions WHERE k BETWEEN ${at} AND ${at} + ${HISTORY_SLOTS - 1} AND event_id = @id)`;
  const bounds = !q.after
    ? `k >= ${lo} AND k < ${hi}`
    : asc
      ? `k >= max(${lo}, coalesce(${cursorRow} + 1, ${at} + ${HISTORY_SLOTS})) AND k < ${hi}`
      : `k >= ${lo} AND k < min(${hi}, coalesce(${cursorRow}, ${at}))`;
  const range = `FROM positions WHERE ${bounds} AND customer_id = @customer ORDER BY k ${dir}`;
  // group_concat takes the subquery's rows in its ORDER BY order (a subquery with LIMIT is never flattened
  // into an aggregate); test/api/positions.test.ts checks every page of both orders byte for byte.
  const rows = stmt(
    historyDb,
    `SELECT 0, CAST(group_concat(item, ',') AS BLOB), NULL, NULL, NULL FROM (SELECT item ${range} LIMIT ${boundLimit('@limit')})
     UNION ALL
     SELECT 1, NULL, ${keyFixTimeSql('k')}, event_id, ${keySlotSql('k')} FROM (SELECT k, event_id ${range} LIMIT 2 OFFSET @limit - 1)`,
    'raw',
  ).all({
    customer: q.customerId,
    num,
    from,
    to,
    limit: q.limit,
    // A cursor's time outside what a key holds is brought a millisecond past its edge: still before or after every row.
    ...(q.after ? { t: Math.min(Math.max(q.after.t, HISTORY_EPOCH_MS - 1), HISTORY_LAST_FIX_MS + 1), id: q.after.id } : {}),
  }) as Array<[0, Buffer | null, null, null, null] | [1, null, number, string, number]>;
  let items: Buffer | null = null;
  const keys: Array<{ key: HistoryKey; slot: number }> = [];
  for (const r of rows) {
    if (r[0] === 0) items = r[1];
    else keys.push({ key: { t: r[2], id: r[3] }, slot: r[4] });
  }
  // Two keys: the page is full and another row follows; the page ends on the earlier one in the walk's order.
  if (items === null || keys.length < 2) return { items, next: null };
  const [a, b] = keys as [(typeof keys)[0], (typeof keys)[0]];
  const aFirst = a.key.t < b.key.t || (a.key.t === b.key.t && a.slot < b.slot);
  return { items, next: (aFirst === asc ? a : b).key };
}

/** Whether the customer has this device (in the other read models' database): an empty history page's 404 or 200. */
export function customerHasDevice(readModelDb: Database.Database, customerId: string, deviceId: string): boolean {
  return stmt(readModelDb, 'SELECT 1 FROM devices WHERE device_id = ? AND customer_id = ?').get(deviceId, customerId) !== undefined;
}
