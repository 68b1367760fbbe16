/**
 * The events read model: every `DeviceEventRaised` (device alarms, safety
 * detections, geofence crossings) as a row for `GET /v1/events` and the
 * feed. `seq` numbers rows in log order (the runner applies the log in
 * order), which is the feed's `sequence`; a replayed event id is ignored.
 */
import type Database from 'better-sqlite3';
import { positionToString } from '../../core/event-store/port.js';
import type { Projection } from '../projection.js';

export interface DeviceEventRow {
  seq: number;
  event_id: string;
  customer_id: string;
  device_id: string;
  driver_id: string | null;
  kind: string;
  severity: string;
  occurred_at: number;
  source: 'device' | 'server';
  /** JSON: `{lat,lng,speed_kmh,heading_deg,timestamp}` or null. */
  position: string | null;
  /** JSON objects: the kind's payload fields, the explanation, the attachments. */
  fields: string;
  context: string;
  media: string;
  /** Store position "commit/prepare" of the DeviceEventRaised. */
  log_position: string;
}

export const eventsProjection: Projection = {
  name: 'events',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS device_events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL UNIQUE, customer_id TEXT NOT NULL,
        device_id TEXT NOT NULL, driver_id TEXT, kind TEXT NOT NULL, severity TEXT NOT NULL, occurred_at INTEGER NOT NULL,
        source TEXT NOT NULL, position TEXT, fields TEXT NOT NULL, context TEXT NOT NULL, media TEXT NOT NULL,
        log_position TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS device_events_by_time ON device_events (customer_id, occurred_at, event_id);
      CREATE INDEX IF NOT EXISTS device_events_by_device ON device_events (customer_id, device_id, occurred_at, event_id);
      CREATE INDEX IF NOT EXISTS device_events_by_driver ON device_events (customer_id, driver_id, occurred_at, event_id);
      CREATE INDEX IF NOT EXISTS device_events_by_kind ON device_events (customer_id, kind, occurred_at, event_id);
      CREATE INDEX IF NOT EXISTS device_events_feed ON device_events (customer_id, seq);`);
  },
  prepare(db: Database.Database) {
    const insert = db.prepare(
      `INSERT OR IGNORE INTO device_events (event_id, customer_id, device_id, driver_id, kind, severity, occurred_at, source,
        position, fields, context, media, log_position)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    return (e) => {
      if (e.type !== 'DeviceEventRaised') return;
      const d = e.data;
      insert.run(
        d.event_id, d.customer_id, d.device_id, d.driver_id, d.kind, d.severity, d.occurred_at, d.source,
        d.position ? JSON.stringify(d.position) : null, JSON.stringify(d.fields), JSON.stringify(d.context),
        JSON.stringify(d.media), positionToString(e.position),
      );
    };
  },
};
