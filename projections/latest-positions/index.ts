/** The latest valid position of every device. */
import type Database from 'better-sqlite3';
import { batchHandler, type Projection } from '../projection.js';
import { evolveLatestPosition, type LatestPositionRow } from './evolve.js';

export const latestPositionsProjection: Projection = {
  name: 'latest-positions',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS latest_positions (
        device_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, lat REAL NOT NULL, lng REAL NOT NULL,
        speed_kmh REAL, heading_deg REAL, altitude_m REAL, satellites INTEGER, ignition INTEGER,
        fix_time INTEGER NOT NULL, received_at INTEGER NOT NULL, odometer_m REAL, attributes TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS latest_positions_by_customer ON latest_positions (customer_id, device_id);`);
  },
  prepare(db: Database.Database) {
    // An upsert, not a REPLACE: the row is changed in place, and its index entry (same customer) is left alone.
    // Its WHERE is evolve.ts's rule against the stored row (a fix older than it changes nothing), so the row is
    // never read: the batch keeps each device's newest fix by the same rule and writes it once, at its end.
    const put = db.prepare(
      `INSERT INTO latest_positions
       (device_id, customer_id, lat, lng, speed_kmh, heading_deg, altitude_m, satellites, ignition, fix_time, received_at, odometer_m, attributes)
       VALUES (@device_id, @customer_id, @lat, @lng, @speed_kmh, @heading_deg, @altitude_m, @satellites, @ignition, @fix_time, @received_at,
         @odometer_m, @attributes)
       ON CONFLICT(device_id) DO UPDATE SET customer_id = excluded.customer_id, lat = excluded.lat, lng = excluded.lng,
         speed_kmh = excluded.speed_kmh, heading_deg = excluded.heading_deg, altitude_m = excluded.altitude_m,
         satellites = excluded.satellites, ignition = excluded.ignition, fix_time = excluded.fix_time, received_at = excluded.received_at,
         odometer_m = excluded.odometer_m, attributes = excluded.attributes
       WHERE excluded.fix_time >= latest_positions.fix_time`,
    );
    const newest = new Map<string, LatestPositionRow>();
    return batchHandler(
      (e) => {
        if (e.type !== 'PositionRecorded') return;
        const before = newest.get(e.data.device_id) ?? null;
        const after = evolveLatestPosition(before, e);
        if (after && after !== before) newest.set(e.data.device_id, after);
      },
      {
        flush: () => {
          // The attributes are turned into text here, once per device and batch, not once per fix.
          for (const row of newest.values()) put.run({ ...row, attributes: JSON.stringify(row.attributes) });
          newest.clear();
        },
        discard: () => newest.clear(),
      },
    );
  },
};
