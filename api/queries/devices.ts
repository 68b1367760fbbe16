/** Device queries, each with the device's latest position; every one is scoped to the customer. */
import type Database from 'better-sqlite3';
import type { DeviceRow, DeviceStatus, LatestPositionRow } from '../../projections/index.js';
import { stmt } from './statements.js';
import { boundLimit } from '../../core/sqlite-limit.js';

export interface DeviceWithPosition extends DeviceRow {
  position: DevicePositionRow | null;
  /** Name of the linked driver (drivers read model), when there is one. */
  driver_name?: string | null;
}

const DEVICE = `SELECT d.*, dr.name AS driver_name FROM devices d
  LEFT JOIN drivers dr ON dr.driver_id = d.driver_id AND dr.customer_id = d.customer_id`;

/** The latest position's fix fields (a device shows no sensor attributes). */
export type DevicePositionRow = Omit<LatestPositionRow, 'odometer_m' | 'attributes'>;

const POSITION_COLUMNS = 'device_id, customer_id, lat, lng, speed_kmh, heading_deg, altitude_m, satellites, ignition, fix_time, received_at';

function latestPosition(db: Database.Database, customerId: string, deviceId: string): DevicePositionRow | null {
  return (
    (stmt(db, `SELECT ${POSITION_COLUMNS} FROM latest_positions WHERE device_id = ? AND customer_id = ?`).get(deviceId, customerId) as
      | DevicePositionRow
      | undefined) ?? null
  );
}

export function deviceById(db: Database.Database, customerId: string, deviceId: string): DeviceWithPosition | null {
  const row = stmt(db, `${DEVICE} WHERE d.device_id = ? AND d.customer_id = ?`).get(deviceId, customerId) as DeviceRow | undefined;
  return row ? { ...row, position: latestPosition(db, customerId, deviceId) } : null;
}

/** One page of devices in id order, strictly after `afterId`. */
export function devicePage(
  db: Database.Database,
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
  const rows = stmt(db, `${DEVICE} WHERE ${where.join(' AND ')} ORDER BY d.device_id LIMIT ${boundLimit()}`).all(...args, filter.limit) as DeviceRow[];
  return rows.map((r) => ({ ...r, position: latestPosition(db, customerId, r.device_id) }));
}
