/**
 * Queries over the projections' read models. Every query takes the customer
 * id: tenant isolation is enforced here, not left to each route.
 */
import type Database from 'better-sqlite3';
import type { DeviceRow, DeviceStatus, LatestPositionRow } from '../projections/index.js';
import type { Plan, Scope } from '../core/events.js';
import type { RateLimit } from './context.js';
import { withRateLimit } from './credential-queries.js';
import { stmt } from './queries/statements.js';

export interface ApiKeyRow {
  key_id: string;
  customer_id: string;
  name: string;
  scopes: Scope[];
  secret_sha256: string;
  revoked_at: number | null;
  plan: Plan;
  /** The customer's agreed rate limit (CustomerRateLimitSet); null: its plan's. */
  rate_limit: RateLimit | null;
}

export interface DeviceWithPosition extends DeviceRow {
  position: LatestPositionRow | null;
  /** Name of the linked driver (drivers read model), when there is one. */
  driver_name?: string | null;
}

export class ReadModels {
  private readonly q: Record<string, Database.Statement>;

  constructor(readonly db: Database.Database) {
    this.q = {
      keyByHash: db.prepare(
        `SELECT k.*, c.plan, r.per_minute AS rate_per_minute, r.burst AS rate_burst
         FROM api_keys k JOIN customers c ON c.customer_id = k.customer_id
         LEFT JOIN customer_rate_limits r ON r.customer_id = k.customer_id
         WHERE k.secret_sha256 = ?`,
      ),
      device: db.prepare(
        `SELECT d.*, dr.name AS driver_name FROM devices d
         LEFT JOIN drivers dr ON dr.driver_id = d.driver_id AND dr.customer_id = d.customer_id
         WHERE d.device_id = ? AND d.customer_id = ?`,
      ),
      latest: db.prepare('SELECT * FROM latest_positions WHERE device_id = ? AND customer_id = ?'),
    };
  }

  apiKeyByHash(hash: string): ApiKeyRow | null {
    type Row = Omit<ApiKeyRow, 'scopes' | 'rate_limit'> & { scopes: string; rate_per_minute: number | null; rate_burst: number | null };
    const row = this.q.keyByHash!.get(hash) as Row | undefined;
    return row ? { ...withRateLimit(row), scopes: JSON.parse(row.scopes) as Scope[] } : null;
  }

  device(customerId: string, deviceId: string): DeviceWithPosition | null {
    const row = this.q.device!.get(deviceId, customerId) as DeviceRow | undefined;
    if (!row) return null;
    const position = (this.q.latest!.get(deviceId, customerId) as LatestPositionRow | undefined) ?? null;
    return { ...row, position };
  }

  /** One page of devices in id order, strictly after `afterId`. */
  devices(
    customerId: string,
    filter: { afterId: string | null; limit: number; statuses: DeviceStatus[] | null; groupId: string | null },
  ): DeviceWithPosition[] {
    const where = ['d.customer_id = ?'];
    const args: unknown[] = [customerId];
    if (filter.afterId) {
      where.push('d.device_id > ?');
      args.push(filter.afterId);
    }
    if (filter.groupId) {
      where.push('d.group_id = ?');
      args.push(filter.groupId);
    }
    if (filter.statuses) {
      where.push(`d.status IN (${filter.statuses.map(() => '?').join(', ')})`);
      args.push(...filter.statuses);
    }
    const rows = stmt(
      this.db,
      `SELECT d.*, p.lat AS p_lat, dr.name AS driver_name FROM devices d LEFT JOIN latest_positions p ON p.device_id = d.device_id
         LEFT JOIN drivers dr ON dr.driver_id = d.driver_id AND dr.customer_id = d.customer_id
         WHERE ${where.join(' AND ')} ORDER BY d.device_id LIMIT ?`,
    ).all(...args, filter.limit) as DeviceRow[];
    return rows.map((r) => ({
      ...r,
      position: (this.q.latest!.get(r.device_id, customerId) as LatestPositionRow | undefined) ?? null,
    }));
  }
}

export interface HistoryRow {
  event_id: string;
  device_id: string;
  fix_time: number;
  received_at: number;
  valid: number;
  lat: number;
  lng: number;
  speed_kmh: number | null;
  heading_deg: number | null;
  altitude_m: number | null;
  satellites: number | null;
  ignition: number | null;
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
