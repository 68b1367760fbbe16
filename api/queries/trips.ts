/** Trips, stops, idling and accumulators (GET /v1/trips, /v1/stops, /v1/idling, /v1/devices/{id}/accumulators); every query is scoped to the customer. */
import type Database from 'better-sqlite3';
import { whereBuilder } from './where.js';
import { boundLimit } from '../../core/sqlite-limit.js';
import { stmt } from './statements.js';

export interface TripRecord {
  device_id: string;
  start_t: number;
  driver_id: string | null;
  start_lat: number;
  start_lng: number;
  end_t: number;
  end_lat: number;
  end_lng: number;
  distance_m: number;
  max_speed_kmh: number;
  idle_ms: number;
  start_odometer_m: number;
  end_odometer_m: number;
  start_engine_s: number;
  end_engine_s: number;
  /** JSON arrays of geofence ids. */
  start_geofences: string;
  end_geofences: string;
}

export interface SpanRecord {
  device_id: string;
  start_t: number;
  end_t: number | null;
  lat: number;
  lng: number;
  /** JSON array of geofence ids. */
  geofences: string;
}

export type SpanTable = 'trips' | 'stops' | 'idles';

export interface SpanFilter {
  deviceIds: string[] | null;
  /** Trips only: the driver at the trip's start. */
  driverIds: string[] | null;
  /** Half-open [from, to) on the start time. */
  from: number | null;
  to: number | null;
  /** Keyset: strictly after this (start time, device id). */
  after: { t: number; id: string } | null;
  limit: number;
}

function pageOf(db: Database.Database, table: SpanTable, columns: string, customerId: string, f: SpanFilter): unknown[] {
  const { where, args, anyOf } = whereBuilder('customer_id = ?', customerId);
  anyOf('device_id', f.deviceIds);
  if (table === 'trips') anyOf('driver_id', f.driverIds);
  if (f.from !== null) {
    where.push('start_t >= ?');
    args.push(f.from);
  }
  if (f.to !== null) {
    where.push('start_t < ?');
    args.push(f.to);
  }
  if (f.after) {
    where.push('(start_t > ? OR (start_t = ? AND device_id > ?))');
    args.push(f.after.t, f.after.t, f.after.id);
  }
  const sql = `SELECT ${columns} FROM ${table} WHERE ${where.join(' AND ')} ORDER BY start_t, device_id LIMIT ${boundLimit()}`;
  return stmt(db, sql).all(...args, f.limit);
}

/** A page of trips in (start time, device id) order. */
export function tripPage(db: Database.Database, customerId: string, f: SpanFilter): TripRecord[] {
  return pageOf(db, 'trips', '*', customerId, f) as TripRecord[];
}

/** A page of stops or idles in (start time, device id) order, each with its device's newest fix (an open one lasts to it). */
export function spanPage(db: Database.Database, table: 'stops' | 'idles', customerId: string, f: SpanFilter): SpanRecord[] {
  return pageOf(db, table, 'device_id, start_t, end_t, lat, lng, geofences', customerId, f) as SpanRecord[];
}

/** The time of each device's newest fix the trips read model folded. */
export function latestFoldedFix(db: Database.Database, deviceId: string): number | null {
  return (stmt(db, 'SELECT max(t) FROM trip_fixes WHERE device_id = ?').pluck().get(deviceId) as number | null) ?? null;
}

export interface AccumulatorsRecord {
  odometer_m: number;
  engine_ms: number;
}

/** The device's accumulators; null when the customer has no such device, zeros before its first fix. */
export function accumulatorsOf(db: Database.Database, customerId: string, deviceId: string): AccumulatorsRecord | null {
  const row = stmt(
    db,
    `SELECT coalesce(a.odometer_m, 0) AS odometer_m, coalesce(a.engine_ms, 0) AS engine_ms FROM devices d
     LEFT JOIN trip_devices a ON a.device_id = d.device_id WHERE d.device_id = ? AND d.customer_id = ?`,
  ).get(deviceId, customerId) as AccumulatorsRecord | undefined;
  return row ?? null;
}

/** The customer's trip rules as stored (JSON), or null for the defaults. */
export function storedTripRules(db: Database.Database, customerId: string): string | null {
  return (stmt(db, 'SELECT rules FROM trip_rules WHERE customer_id = ?').pluck().get(customerId) as string | undefined) ?? null;
}
