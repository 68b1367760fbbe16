/** The devices read model: registration, edits and connectivity of every device. */
import type Database from 'better-sqlite3';
import { BatchRows } from '../batch-rows.js';
import { batchHandler, type Projection } from '../projection.js';
import { evolveDevice, type DeviceRow } from './evolve.js';

const COLUMNS = [
  'device_id', 'customer_id', 'imei', 'model', 'name', 'group_id', 'driver_id', 'terminal_id', 'speed_limit_kmh', 'command_texts',
  'status', 'protocol', 'connection_id', 'last_seen_at', 'created_at', 'updated_at',
] as const;

export const devicesProjection: Projection = {
  name: 'devices',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS devices (
        device_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, imei TEXT NOT NULL UNIQUE, model TEXT NOT NULL,
        name TEXT, group_id TEXT, driver_id TEXT, terminal_id TEXT, speed_limit_kmh REAL, command_texts TEXT, status TEXT NOT NULL, protocol TEXT,
        connection_id TEXT, last_seen_at INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS devices_by_customer ON devices (customer_id, device_id);`);
  },
  prepare(db: Database.Database) {
    const get = db.prepare('SELECT * FROM devices WHERE device_id = ?');
    const put = db.prepare(
      `INSERT OR REPLACE INTO devices (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => '@' + c).join(', ')})`,
    );
    // Rows left to write at the batch's end differ from the table in last_seen_at only (see below).
    const seen = db.prepare('UPDATE devices SET last_seen_at = ? WHERE device_id = ?');
    const rows = new BatchRows<string, DeviceRow>(
      (deviceId) => (get.get(deviceId) as DeviceRow | undefined) ?? null,
      (deviceId, row) => seen.run(row.last_seen_at, deviceId),
    );
    return batchHandler(
      (e) => {
        if (!('device_id' in e.data)) return;
        const deviceId = e.data.device_id;
        const before = rows.get(deviceId);
        const after = evolveDevice(before, e);
        if (!after || after === before) return;
        // A report only moves last_seen_at, which no other projection reads: written at the batch's end.
        // Anything else (driver, speed limit, status) is written at once, for the projections after this one.
        if (e.type === 'PositionRecorded' || e.type === 'StatusReported' || e.type === 'AlarmReported') rows.set(deviceId, after);
        else {
          put.run(after);
          rows.keep(deviceId, after);
        }
      },
      {
        flush: () => rows.flush(),
        discard: () => rows.discard(),
      },
    );
  },
};
