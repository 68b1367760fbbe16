/**
 * Detector state rows: one JSON document per device, read once per batch and
 * written once at its end, in the runner's transaction (batch-rows.ts).
 */
import type Database from 'better-sqlite3';
import { BatchRows } from '../batch-rows.js';
import type { DetectorState } from './state.js';

export interface DetectorStateStore {
  get(deviceId: string): DetectorState | null;
  put(deviceId: string, customerId: string, state: DetectorState): void;
  /** Writes the states changed in this batch (end of batch, inside its transaction). */
  flush(): void;
  /** Forgets them unwritten (the batch rolled back). */
  discard(): void;
}

export function migrateDetectorState(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS safety_detector_state (
    device_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, state TEXT NOT NULL) WITHOUT ROWID;`);
}

interface Kept {
  customerId: string | null;
  state: DetectorState;
}

export function detectorStateStore(db: Database.Database): DetectorStateStore {
  const get = db.prepare('SELECT state FROM safety_detector_state WHERE device_id = ?').pluck();
  const put = db.prepare(
    `INSERT INTO safety_detector_state (device_id, customer_id, state) VALUES (?, ?, ?)
     ON CONFLICT(device_id) DO UPDATE SET state = excluded.state`,
  );
  const rows = new BatchRows<string, Kept>(
    (deviceId) => {
      const raw = get.get(deviceId) as string | undefined;
      return raw === undefined ? null : { customerId: null, state: JSON.parse(raw) as DetectorState };
    },
    // A stored row keeps its customer (the upsert sets only the state), so a row loaded from the table needs none.
    (deviceId, kept) => put.run(deviceId, kept.customerId ?? '', JSON.stringify(kept.state)),
  );
  return {
    get(deviceId) {
      return rows.get(deviceId)?.state ?? null;
    },
    put(deviceId, customerId, state) {
      rows.set(deviceId, { customerId, state });
    },
    flush: () => rows.flush(),
    discard: () => rows.discard(),
  };
}
