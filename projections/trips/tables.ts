/**
 * The trips read model's tables and the statements that write them. Trips,
 * stops and idles are keyed by device and start time, so a re-fold after a
 * late fix replaces what it cut again; each fix is kept (as driver scores
 * keep theirs) for that re-fold, with what the accumulators read when it came.
 */
import type Database from 'better-sqlite3';
import type { SpanRow, TripFix, TripWrite } from './fold.js';

export function migrateTripTables(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS trip_devices (
      device_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, fold TEXT NOT NULL, accumulators TEXT NOT NULL,
      odometer_m REAL NOT NULL, engine_ms REAL NOT NULL, ignition TEXT) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS trip_fixes (
      device_id TEXT NOT NULL, t INTEGER NOT NULL, lat REAL NOT NULL, lng REAL NOT NULL, speed_kmh REAL, ignition INTEGER,
      odometer_m REAL NOT NULL, engine_s REAL NOT NULL, driver_id TEXT, geofences TEXT, PRIMARY KEY (device_id, t)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS trips (
      device_id TEXT NOT NULL, start_t INTEGER NOT NULL, customer_id TEXT NOT NULL, driver_id TEXT,
      start_lat REAL NOT NULL, start_lng REAL NOT NULL, end_t INTEGER NOT NULL, end_lat REAL NOT NULL, end_lng REAL NOT NULL,
      distance_m REAL NOT NULL, max_speed_kmh REAL NOT NULL, idle_ms INTEGER NOT NULL,
      start_odometer_m REAL NOT NULL, end_odometer_m REAL NOT NULL, start_engine_s REAL NOT NULL, end_engine_s REAL NOT NULL,
      start_geofences TEXT NOT NULL, end_geofences TEXT NOT NULL, PRIMARY KEY (device_id, start_t)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS trips_by_customer ON trips (customer_id, start_t, device_id);
    CREATE TABLE IF NOT EXISTS stops (
      device_id TEXT NOT NULL, start_t INTEGER NOT NULL, customer_id TEXT NOT NULL, end_t INTEGER, lat REAL NOT NULL, lng REAL NOT NULL,
      geofences TEXT NOT NULL, PRIMARY KEY (device_id, start_t)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS stops_by_customer ON stops (customer_id, start_t, device_id);
    CREATE TABLE IF NOT EXISTS idles (
      device_id TEXT NOT NULL, start_t INTEGER NOT NULL, customer_id TEXT NOT NULL, end_t INTEGER, lat REAL NOT NULL, lng REAL NOT NULL,
      geofences TEXT NOT NULL, PRIMARY KEY (device_id, start_t)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS idles_by_customer ON idles (customer_id, start_t, device_id);
    CREATE TABLE IF NOT EXISTS trip_rules (customer_id TEXT PRIMARY KEY, rules TEXT NOT NULL) WITHOUT ROWID;`);
}

interface StoredTripFix {
  t: number;
  lat: number;
  lng: number;
  speed_kmh: number | null;
  ignition: number | null;
  odometer_m: number;
  engine_s: number;
  driver_id: string | null;
  /** JSON, null for none (most fixes). */
  geofences: string | null;
}

function tripFixOf(row: StoredTripFix): TripFix {
  return { ...row, ignition: row.ignition === null ? null : row.ignition === 1, geofences: row.geofences === null ? [] : (JSON.parse(row.geofences) as string[]) };
}

export function tripStatements(db: Database.Database) {
  const s = {
    fixAt: db.prepare('SELECT 1 FROM trip_fixes WHERE device_id = ? AND t = ?').pluck(),
    fixBefore: db.prepare('SELECT * FROM trip_fixes WHERE device_id = ? AND t < ? ORDER BY t DESC LIMIT 1'),
    fixAfter: db.prepare('SELECT * FROM trip_fixes WHERE device_id = ? AND t > ? ORDER BY t ASC LIMIT 1'),
    fixesFrom: db.prepare('SELECT * FROM trip_fixes WHERE device_id = ? AND t >= ? ORDER BY t ASC'),
    insertFix: db.prepare(
      'INSERT INTO trip_fixes (device_id, t, lat, lng, speed_kmh, ignition, odometer_m, engine_s, driver_id, geofences) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    pruneFixes: db.prepare('DELETE FROM trip_fixes WHERE device_id = ? AND t < ?'),
    tripStartAtOrBefore: db.prepare('SELECT start_t FROM trips WHERE device_id = ? AND start_t <= ? ORDER BY start_t DESC LIMIT 1').pluck(),
    stopBefore: db.prepare('SELECT start_t, end_t, lat, lng, geofences FROM stops WHERE device_id = ? AND start_t < ? ORDER BY start_t DESC LIMIT 1'),
    upsertTrip: db.prepare(
      `INSERT OR REPLACE INTO trips (device_id, start_t, customer_id, driver_id, start_lat, start_lng, end_t, end_lat, end_lng,
         distance_m, max_speed_kmh, idle_ms, start_odometer_m, end_odometer_m, start_engine_s, end_engine_s, start_geofences, end_geofences)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    upsertStop: db.prepare('INSERT OR REPLACE INTO stops (device_id, start_t, customer_id, end_t, lat, lng, geofences) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    upsertIdle: db.prepare('INSERT OR REPLACE INTO idles (device_id, start_t, customer_id, end_t, lat, lng, geofences) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    deleteStop: db.prepare('DELETE FROM stops WHERE device_id = ? AND start_t = ?'),
    deleteFrom: {
      trips: db.prepare('DELETE FROM trips WHERE device_id = ? AND start_t >= ?'),
      stops: db.prepare('DELETE FROM stops WHERE device_id = ? AND start_t >= ?'),
      idles: db.prepare('DELETE FROM idles WHERE device_id = ? AND start_t >= ?'),
    },
    rules: db.prepare('SELECT rules FROM trip_rules WHERE customer_id = ?').pluck(),
    setRules: db.prepare('INSERT OR REPLACE INTO trip_rules (customer_id, rules) VALUES (?, ?)'),
    loadDevice: db.prepare('SELECT customer_id, fold, accumulators, ignition FROM trip_devices WHERE device_id = ?'),
    saveDevice: db.prepare(
      'INSERT OR REPLACE INTO trip_devices (device_id, customer_id, fold, accumulators, odometer_m, engine_ms, ignition) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
  };

  return {
    ...s,
    fixBeforeOrAfter(deviceId: string, t: number): TripFix | null {
      const row = (s.fixBefore.get(deviceId, t) ?? s.fixAfter.get(deviceId, t)) as StoredTripFix | undefined;
      return row ? tripFixOf(row) : null;
    },
    fixesFromTime(deviceId: string, t: number): TripFix[] {
      return (s.fixesFrom.all(deviceId, t) as StoredTripFix[]).map(tripFixOf);
    },
    insertTripFix(deviceId: string, f: TripFix): void {
      const geofences = f.geofences.length === 0 ? null : JSON.stringify(f.geofences);
      s.insertFix.run(deviceId, f.t, f.lat, f.lng, f.speed_kmh, f.ignition === null ? null : f.ignition ? 1 : 0, f.odometer_m, f.engine_s, f.driver_id, geofences);
    },
    stopBeforeTime(deviceId: string, t: number): SpanRow | null {
      const row = s.stopBefore.get(deviceId, t) as (Omit<SpanRow, 'geofences'> & { geofences: string }) | undefined;
      return row ? { ...row, geofences: JSON.parse(row.geofences) as string[] } : null;
    },
    apply(deviceId: string, customerId: string, writes: TripWrite[]): void {
      for (const w of writes) {
        if ('delete' in w) s.deleteStop.run(deviceId, w.delete);
        else if (w.table === 'trips') {
          const r = w.row;
          s.upsertTrip.run(
            deviceId, r.start.t, customerId, r.start.driver_id, r.start.lat, r.start.lng, r.end.t, r.end.lat, r.end.lng,
            r.distance_m, r.max_speed_kmh, r.idle_ms, r.start.odometer_m, r.end.odometer_m, r.start.engine_s, r.end.engine_s,
            JSON.stringify(r.start.geofences), JSON.stringify(r.end.geofences),
          );
        } else {
          const r = w.row;
          (w.table === 'stops' ? s.upsertStop : s.upsertIdle).run(deviceId, r.start_t, customerId, r.end_t, r.lat, r.lng, JSON.stringify(r.geofences));
        }
      }
    },
    /** Forgets what a re-fold from `t` will cut again. */
    deleteFromTime(deviceId: string, t: number): void {
      for (const q of Object.values(s.deleteFrom)) q.run(deviceId, t);
    },
  };
}

export type TripStatements = ReturnType<typeof tripStatements>;
