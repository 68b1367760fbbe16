/** Driver queries; every one is scoped to the customer. */
import type Database from 'better-sqlite3';
import type { DriverRow } from '../../projections/drivers/index.js';
import { stmt } from './statements.js';
import { boundLimit } from '../../core/sqlite-limit.js';

export type { DriverRow };

export interface CurrentVehicle {
  device_id: string;
  device_name: string | null;
}

export function driverById(db: Database.Database, customerId: string, driverId: string): DriverRow | null {
  return (stmt(db, 'SELECT * FROM drivers WHERE driver_id = ? AND customer_id = ?').get(driverId, customerId) as DriverRow | undefined) ?? null;
}

/** One page in id order, strictly after `afterId`. */
export function driverPage(db: Database.Database, customerId: string, afterId: string | null, limit: number): DriverRow[] {
  return stmt(db, `SELECT * FROM drivers WHERE customer_id = ? AND driver_id > ? ORDER BY driver_id LIMIT ${boundLimit()}`).all(
    customerId,
    afterId ?? '',
    limit,
  ) as DriverRow[];
}

/**
 * The vehicle each driver is linked to: the device whose driver_id names
 * them (the most recently edited one, should two name the same driver).
 */
export function currentVehicles(db: Database.Database, customerId: string, driverIds: readonly string[]): Map<string, CurrentVehicle> {
  const out = new Map<string, CurrentVehicle>();
  if (driverIds.length === 0) return out;
  const rows = stmt(
    db,
    `SELECT driver_id, device_id, name FROM devices WHERE customer_id = ? AND driver_id IN (SELECT value FROM json_each(?))
     ORDER BY updated_at ASC, device_id ASC`,
  ).all(customerId, JSON.stringify(driverIds)) as Array<{ driver_id: string; device_id: string; name: string | null }>;
  // Ascending order: the last row per driver wins.
  for (const r of rows) out.set(r.driver_id, { device_id: r.device_id, device_name: r.name });
  return out;
}
