/**
 * Position history: every stored fix that can be true (usable-fix.ts; an
 * implausible one stays in the log only), indexed by device and fix time so a
 * window query is a range scan. Late fixes simply land in their place.
 */
import type Database from 'better-sqlite3';
import type { Projection } from '../projection.js';
import { isPlausibleFix } from '../usable-fix.js';

export const historyProjection: Projection = {
  name: 'history',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS positions (
        event_id TEXT PRIMARY KEY, device_id TEXT NOT NULL, customer_id TEXT NOT NULL,
        fix_time INTEGER NOT NULL, received_at INTEGER NOT NULL, valid INTEGER NOT NULL,
        lat REAL NOT NULL, lng REAL NOT NULL, speed_kmh REAL, heading_deg REAL, altitude_m REAL,
        satellites INTEGER, ignition INTEGER, odometer_m REAL);
      CREATE INDEX IF NOT EXISTS positions_by_device_time ON positions (device_id, fix_time, event_id);`);
  },
  prepare(db: Database.Database) {
    const insert = db.prepare(
      `INSERT OR IGNORE INTO positions (event_id, device_id, customer_id, fix_time, received_at, valid, lat, lng,
        speed_kmh, heading_deg, altitude_m, satellites, ignition, odometer_m)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    return (e) => {
      if (e.type !== 'PositionRecorded' || !isPlausibleFix(e.data)) return;
      const d = e.data;
      insert.run(
        e.id, d.device_id, d.customer_id, d.fix_time, d.received_at, d.valid ? 1 : 0, d.lat, d.lng,
        d.speed_kmh, d.heading_deg, d.altitude_m, d.satellites, d.ignition === null ? null : d.ignition ? 1 : 0, d.odometer_m,
      );
    };
  },
};
