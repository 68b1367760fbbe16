/** Position history queries; every one is scoped to the customer. */
import type Database from 'better-sqlite3';
import type { LatestPositionRow } from '../../projections/index.js';
import { stmt } from './statements.js';

/** A stored fix of the history: the latest-position row's fix fields, plus validity and odometer. */
export interface HistoryRow extends Omit<LatestPositionRow, 'customer_id'> {
  event_id: string;
  valid: number;
  odometer_m: number | null;
}

/** HistoryRow's fields in the order historyPage selects them. */
const HISTORY_COLUMNS = [
  'event_id', 'device_id', 'fix_time', 'received_at', 'valid', 'lat', 'lng',
  'speed_kmh', 'heading_deg', 'altitude_m', 'satellites', 'ignition', 'odometer_m',
] as const;

/** Position history of one device in [from, to), keyset-paginated on (fix_time, event_id). */
export function historyPage(
  db: Database.Database,
  customerId: string,
  q: { deviceId: string; from: number; to: number; after: { t: number; id: string } | null; limit: number; order: 'asc' | 'desc' },
): HistoryRow[] {
  const cmp = q.order === 'asc' ? '>' : '<';
  const keyset = q.after ? `AND (fix_time ${cmp} @t OR (fix_time = @t AND event_id ${cmp} @id))` : '';
  const dir = q.order === 'asc' ? 'ASC' : 'DESC';
  const rows = stmt(
    db,
    `SELECT ${HISTORY_COLUMNS.join(', ')} FROM positions WHERE device_id = @device AND customer_id = @customer
     AND fix_time >= @from AND fix_time < @to ${keyset}
     ORDER BY fix_time ${dir}, event_id ${dir} LIMIT @limit`,
    'raw',
  ).all({
    device: q.deviceId,
    customer: customerId,
    from: q.from,
    to: q.to,
    limit: q.limit,
    ...(q.after ? { t: q.after.t, id: q.after.id } : {}),
  }) as unknown[][];
  return rows.map(
    (r): HistoryRow => ({
      event_id: r[0] as string,
      device_id: r[1] as string,
      fix_time: r[2] as number,
      received_at: r[3] as number,
      valid: r[4] as number,
      lat: r[5] as number,
      lng: r[6] as number,
      speed_kmh: r[7] as number | null,
      heading_deg: r[8] as number | null,
      altitude_m: r[9] as number | null,
      satellites: r[10] as number | null,
      ignition: r[11] as number | null,
      odometer_m: r[12] as number | null,
    }),
  );
}
