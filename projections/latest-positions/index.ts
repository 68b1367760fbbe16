/** The latest valid position of every device. */
import type Database from 'better-sqlite3';
import { BatchRows } from '../batch-rows.js';
import { batchHandler, type Projection } from '../projection.js';
import { evolveLatestPosition, type LatestPositionRow } from './evolve.js';

export const latestPositionsProjection: Projection = {
  name: 'latest-positions',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS latest_positions (
        device_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, lat REAL NOT NULL, lng REAL NOT NULL,
        speed_kmh REAL, heading_deg REAL, altitude_m REAL, satellites INTEGER, ignition INTEGER,
        fix_time INTEGER NOT NULL, received_at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS latest_positions_by_customer ON latest_positions (customer_id, device_id);`);
  },
  prepare(db: Database.Database) {
    const get = db.prepare('SELECT * FROM latest_positions WHERE device_id = ?');
    // An upsert, not a REPLACE: the row is changed in place, and its index entry (same customer) is left alone.
    const put = db.prepare(
      `INSERT INTO latest_positions
       (device_id, customer_id, lat, lng, speed_kmh, heading_deg, altitude_m, satellites, ignition, fix_time, received_at)
       VALUES (@device_id, @customer_id, @lat, @lng, @speed_kmh, @heading_deg, @altitude_m, @satellites, @ignition, @fix_time, @received_at)
       ON CONFLICT(device_id) DO UPDATE SET customer_id = excluded.customer_id, lat = excluded.lat, lng = excluded.lng,
         speed_kmh = excluded.speed_kmh, heading_deg = excluded.heading_deg, altitude_m = excluded.altitude_m,
         satellites = excluded.satellites, ignition = excluded.ignition, fix_time = excluded.fix_time, received_at = excluded.received_at`,
    );
    // One read and one write per device and batch, however many fixes it sent.
    const rows = new BatchRows<string, LatestPositionRow>(
      (deviceId) => (get.get(deviceId) as LatestPositionRow | undefined) ?? null,
      (_, row) => put.run(row),
    );
    return batchHandler(
      (e) => {
        if (e.type !== 'PositionRecorded') return;
        const before = rows.get(e.data.device_id);
        const after = evolveLatestPosition(before, e);
        if (after && after !== before) rows.set(e.data.device_id, after);
      },
      {
        flush: () => rows.flush(),
        discard: () => rows.discard(),
      },
    );
  },
};
