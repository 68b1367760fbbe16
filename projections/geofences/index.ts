/**
 * Geofences: the read model the API lists, and the crossing detector. Each
 * usable fix (usable-fix.ts) newer than the device's last processed one is tested against the
 * customer's geofences (R-tree + exact test, see customer-fences.ts) and the
 * difference with the device's previous set becomes `geofence.enter` /
 * `geofence.exit` events, raised with ids derived from the fix event, the
 * geofence and the direction, so a replay derives the same ids and appends
 * nothing new. A stay that reaches the geofence's `dwell_s` raises one
 * `geofence.dwell` (presence.ts, stepDwell), its id from the device, the
 * geofence and the visit's start.
 */
import type Database from 'better-sqlite3';
import type { PositionRecorded } from '../../core/events.js';
import type { RecordedEvent } from '../../core/event-store/port.js';
import { BatchLookup, BatchRows } from '../batch-rows.js';
import { raiseDeviceEvent, type RaiseInput } from '../device-events.js';
import { isUsableFix } from '../usable-fix.js';
import { batchHandler, type DerivedEvent, type Projection } from '../projection.js';
import { FenceCache } from './fence-cache.js';
import { stepDwell, stepPresence, type Crossing, type DwellReached, type Presence } from './presence.js';

export { GeofenceIndex, compileFence, fenceContains, type Fence } from './geofence-index.js';

export interface GeofenceRow {
  geofence_id: string;
  customer_id: string;
  name: string;
  shape: 'polygon' | 'circle';
  /** GeoJSON Polygon as JSON text. */
  geometry: string;
  center_lat: number | null;
  center_lng: number | null;
  radius_m: number | null;
  dwell_s: number | null;
  created_at: number;
}

export const geofencesProjection: Projection = {
  name: 'geofences',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS geofences (
        geofence_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, name TEXT NOT NULL, shape TEXT NOT NULL,
        geometry TEXT NOT NULL, center_lat REAL, center_lng REAL, radius_m REAL, dwell_s INTEGER, created_at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS geofences_by_customer ON geofences (customer_id, geofence_id);
      CREATE TABLE IF NOT EXISTS geofence_presence (
        device_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, last_fix_time INTEGER NOT NULL, inside TEXT NOT NULL, dwelt TEXT NOT NULL);`);
  },
  prepare(db: Database.Database) {
    const q = {
      insert: db.prepare(
        `INSERT OR REPLACE INTO geofences (geofence_id, customer_id, name, shape, geometry, center_lat, center_lng, radius_m, dwell_s, created_at)
         VALUES (@geofence_id, @customer_id, @name, @shape, @geometry, @center_lat, @center_lng, @radius_m, @dwell_s, @created_at)`,
      ),
      setDwell: db.prepare('UPDATE geofences SET dwell_s = ? WHERE geofence_id = ? AND customer_id = ?'),
      remove: db.prepare('DELETE FROM geofences WHERE geofence_id = ? AND customer_id = ?'),
      presence: db.prepare('SELECT last_fix_time, inside, dwelt FROM geofence_presence WHERE device_id = ?'),
      putPresence: db.prepare(
        `INSERT INTO geofence_presence (device_id, customer_id, last_fix_time, inside, dwelt) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(device_id) DO UPDATE SET last_fix_time = excluded.last_fix_time, inside = excluded.inside, dwelt = excluded.dwelt`,
      ),
      driverOf: db.prepare('SELECT driver_id FROM devices WHERE device_id = ?').pluck(),
    };

    const cache = new FenceCache(db);

    // A device's presence, read once per batch and written once at its end.
    const presences = new BatchRows<string, { customerId: string; presence: Presence }>(
      (deviceId) => {
        const row = q.presence.get(deviceId) as { last_fix_time: number; inside: string; dwelt: string } | undefined;
        // The stored row keeps its customer (the upsert does not change it).
        if (!row) return null;
        return { customerId: '', presence: { last_fix_time: row.last_fix_time, inside: JSON.parse(row.inside) as Presence['inside'], dwelt: JSON.parse(row.dwelt) as string[] } };
      },
      (deviceId, { customerId, presence }) =>
        q.putPresence.run(deviceId, customerId, presence.last_fix_time, JSON.stringify(presence.inside), JSON.stringify(presence.dwelt)),
    );
    const driverOf = new BatchLookup((deviceId) => (q.driverOf.get(deviceId) as string | null | undefined) ?? null);

    const onFix = (e: RecordedEvent<PositionRecorded>): DerivedEvent[] | void => {
      const d = e.data;
      if (!isUsableFix(d)) return;
      const before = presences.get(d.device_id)?.presence ?? null;
      const fences = cache.of(d.customer_id);
      const step = stepPresence(before, d.fix_time, () => fences.containing(d.lat, d.lng), (id) => fences.get(id) !== undefined);
      if (!step) return;
      const dwell = stepDwell(step.presence, (id) => fences.dwellMs(id));
      presences.set(d.device_id, { customerId: d.customer_id, presence: dwell.presence });
      if (step.crossings.length === 0 && dwell.reached.length === 0) return;
      const driverId = driverOf.get(d.device_id);
      return [
        ...step.crossings.map((c) => crossingEvent(e, c, fences.get(c.geofence_id)!.name, driverId, before?.inside[c.geofence_id])),
        ...dwell.reached.map((r) => dwellEvent(e, r, fences.get(r.geofence_id)!.name, driverId, fences.dwellMs(r.geofence_id)!)),
      ];
    };

    const handle = (e: RecordedEvent): DerivedEvent[] | void => {
      driverOf.seen(e.type);
      switch (e.type) {
        case 'GeofenceCreated': {
          const g = e.data;
          q.insert.run({
            geofence_id: g.geofence_id,
            customer_id: g.customer_id,
            name: g.name,
            shape: g.shape,
            geometry: JSON.stringify(g.geometry),
            center_lat: g.center?.lat ?? null,
            center_lng: g.center?.lng ?? null,
            radius_m: g.radius_m,
            dwell_s: g.dwell_s ?? null,
            created_at: g.created_at,
          });
          cache.created(g);
          return;
        }
        case 'GeofenceUpdated':
          q.setDwell.run(e.data.dwell_s, e.data.geofence_id, e.data.customer_id);
          cache.dwellSet(e.data);
          return;
        case 'GeofenceDeleted':
          // Ids are never reused, so dropping the row is "404 forever"; device sets forget it on their next fix.
          q.remove.run(e.data.geofence_id, e.data.customer_id);
          cache.deleted(e.data.customer_id, e.data.geofence_id);
          return;
        case 'PositionRecorded':
          return onFix(e as RecordedEvent<PositionRecorded>);
        default:
          return;
      }
    };
    return batchHandler(handle, {
      flush() {
        presences.flush();
        driverOf.flush();
      },
      discard() {
        presences.discard();
        driverOf.discard();
      },
    });
  },
};

/** A geofence event at the fix that caused it: its time, position, device and customer. */
function atFix(
  e: RecordedEvent<PositionRecorded>,
  driverId: string | null,
  own: Pick<RaiseInput, 'kind' | 'cause' | 'fields' | 'context'>,
): DerivedEvent {
  const d = e.data;
  return raiseDeviceEvent({
    ...own,
    customerId: d.customer_id,
    deviceId: d.device_id,
    driverId,
    occurredAt: d.fix_time,
    source: 'server',
    position: { lat: d.lat, lng: d.lng, speed_kmh: d.speed_kmh, heading_deg: d.heading_deg, timestamp: d.fix_time },
  });
}

function crossingEvent(
  e: RecordedEvent<PositionRecorded>,
  c: Crossing,
  geofenceName: string,
  driverId: string | null,
  enteredAt: number | undefined,
): DerivedEvent {
  const exit = c.direction === 'exit';
  return atFix(e, driverId, {
    kind: exit ? 'geofence.exit' : 'geofence.enter',
    cause: `geofence:${c.geofence_id}:${e.id}:${c.direction}`,
    fields: {
      geofence_id: c.geofence_id,
      geofence_name: geofenceName,
      ...(exit ? { dwell_s: Math.round((c.dwell_ms ?? 0) / 1000) } : {}),
    },
    context: { rule: 'geofence_crossing', fix_event_id: e.id, ...(exit && enteredAt !== undefined ? { entered_at: enteredAt } : {}) },
  });
}

/** Once per visit: the id comes from the device, the geofence and when the visit began, not from the fix that reached it. */
function dwellEvent(e: RecordedEvent<PositionRecorded>, r: DwellReached, geofenceName: string, driverId: string | null, thresholdMs: number): DerivedEvent {
  return atFix(e, driverId, {
    kind: 'geofence.dwell',
    cause: `geofence-dwell:${r.geofence_id}:${e.data.device_id}:${r.entered_at}`,
    fields: { geofence_id: r.geofence_id, geofence_name: geofenceName, dwell_s: Math.round(r.dwell_ms / 1000) },
    context: { rule: 'geofence_dwell', fix_event_id: e.id, entered_at: r.entered_at, dwell_threshold_s: thresholdMs / 1000 },
  });
}
