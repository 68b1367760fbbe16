/** Geofence queries; every one is scoped to the customer. */
import type Database from 'better-sqlite3';
import type { GeofenceRow } from '../../projections/geofences/index.js';
import { stmt } from './statements.js';
import { boundLimit } from '../../core/sqlite-limit.js';

export function geofenceById(db: Database.Database, customerId: string, geofenceId: string): GeofenceRow | null {
  return (stmt(db, 'SELECT * FROM geofences WHERE geofence_id = ? AND customer_id = ?').get(geofenceId, customerId) as GeofenceRow | undefined) ?? null;
}

/** One page in id order, strictly after `afterId`. */
export function geofencePage(db: Database.Database, customerId: string, afterId: string | null, limit: number): GeofenceRow[] {
  return stmt(db, `SELECT * FROM geofences WHERE customer_id = ? AND geofence_id > ? ORDER BY geofence_id LIMIT ${boundLimit()}`).all(
    customerId,
    afterId ?? '',
    limit,
  ) as GeofenceRow[];
}
