/** Detector state rows: one JSON document per device, written in the runner's transaction. */
import type Database from 'better-sqlite3';
import type { DetectorState } from './state.js';

export interface DetectorStateStore {
  get(deviceId: string): DetectorState | null;
  put(deviceId: string, customerId: string, state: DetectorState): void;
}

export function migrateDetectorState(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS safety_detector_state (
    device_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, state TEXT NOT NULL) WITHOUT ROWID;`);
}

export function detectorStateStore(db: Database.Database): DetectorStateStore {
  const get = db.prepare('SELECT state FROM safety_detector_state WHERE device_id = ?').pluck();
  const put = db.prepare(
    `INSERT INTO safety_detector_state (device_id, customer_id, state) VALUES (?, ?, ?)
     ON CONFLICT(device_id) DO UPDATE SET state = excluded.state`,
  );
  return {
    get(deviceId) {
      const raw = get.get(deviceId) as string | undefined;
      return raw === undefined ? null : (JSON.parse(raw) as DetectorState);
    },
    put(deviceId, customerId, state) {
      put.run(deviceId, customerId, JSON.stringify(state));
    },
  };
}
