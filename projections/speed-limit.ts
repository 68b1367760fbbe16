/**
 * The overspeed threshold that applies to a device: its own limit, else its
 * customer's default, else none (no server-side overspeed check). Read from
 * the devices and customers read models, which the runner updates before the
 * detectors see the same event.
 */
import type Database from 'better-sqlite3';

export function effectiveSpeedLimit(deviceLimit: number | null, customerLimit: number | null): number | null {
  return deviceLimit ?? customerLimit ?? null;
}

/** Prepared lookup: device id -> the limit in km/h, or null. */
export function speedLimitLookup(db: Database.Database): (deviceId: string) => number | null {
  const q = db.prepare(
    `SELECT d.speed_limit_kmh AS device_limit, c.speed_limit_kmh AS customer_limit
     FROM devices d LEFT JOIN customers c ON c.customer_id = d.customer_id WHERE d.device_id = ?`,
  );
  return (deviceId) => {
    const row = q.get(deviceId) as { device_limit: number | null; customer_limit: number | null } | undefined;
    return row ? effectiveSpeedLimit(row.device_limit, row.customer_limit) : null;
  };
}

export interface DeviceContext {
  driverId: string | null;
  /** The effective speed limit, or null. */
  limitKmh: number | null;
}

/** Prepared lookup: device id -> its driver and effective speed limit, in one read (both null for an unknown device). */
export function deviceContextLookup(db: Database.Database): (deviceId: string) => DeviceContext {
  const q = db.prepare(
    `SELECT d.driver_id AS driver_id, d.speed_limit_kmh AS device_limit, c.speed_limit_kmh AS customer_limit
     FROM devices d LEFT JOIN customers c ON c.customer_id = d.customer_id WHERE d.device_id = ?`,
  );
  return (deviceId) => {
    const row = q.get(deviceId) as { driver_id: string | null; device_limit: number | null; customer_limit: number | null } | undefined;
    return row ? { driverId: row.driver_id, limitKmh: effectiveSpeedLimit(row.device_limit, row.customer_limit) } : { driverId: null, limitKmh: null };
  };
}
