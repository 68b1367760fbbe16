/**
 * Daily driver scores: per driver and UTC day, the distance, driving time and
 * overspeed time of the stretches between consecutive valid fixes of the
 * driver's vehicle (segment.ts), and the DeviceEventRaised counts by kind.
 * The score itself is computed when read (score.ts), so a late event only
 * bumps its day's count and that day's score follows.
 *
 * A stretch belongs to the day and the driver of its later fix; the driver and
 * speed limit of a fix are those the device had when the fix was processed
 * (kept with the fix). A late fix is spliced between its neighbours: the
 * stretch prev->next is taken back and prev->late, late->next are added, with
 * the late fix taking its neighbour's driver and limit, so the totals equal
 * those of an in-order arrival and a replay gives the same days. Only usable
 * fixes count (usable-fix.ts): a fix dated in the future adds no day. Each
 * event is counted once per event_id, however often it reaches the log.
 */
import type Database from 'better-sqlite3';
import type { DeviceEventRaised, PositionRecorded } from '../../core/events.js';
import { batchHandler, type Projection } from '../projection.js';
import { BatchLookup } from '../batch-rows.js';
import { deviceContextLookup } from '../speed-limit.js';
import { isUsableFix } from '../usable-fix.js';
import { dayOf } from './days.js';
import { stretch, type Contribution, type ScoreFix } from './segment.js';

/** Fixes older than this (behind the device's newest) are dropped; a fix arriving later than that adds nothing. */
export const FIX_RETENTION_MS = 35 * 86_400_000;

interface StoredFix extends ScoreFix {
  driver_id: string;
  limit_kmh: number | null;
}

export const driverScoresProjection: Projection = {
  name: 'driver-scores',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS score_fixes (
        device_id TEXT NOT NULL, t INTEGER NOT NULL, lat REAL NOT NULL, lng REAL NOT NULL, speed_kmh REAL,
        driver_id TEXT NOT NULL, limit_kmh REAL, PRIMARY KEY (device_id, t)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS driver_days (
        driver_id TEXT NOT NULL, day TEXT NOT NULL, customer_id TEXT NOT NULL,
        distance_m REAL NOT NULL, driving_ms REAL NOT NULL, overspeed_ms REAL NOT NULL, PRIMARY KEY (driver_id, day)) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS driver_days_by_customer ON driver_days (customer_id, day);
      CREATE TABLE IF NOT EXISTS driver_day_events (
        driver_id TEXT NOT NULL, day TEXT NOT NULL, kind TEXT NOT NULL, count INTEGER NOT NULL,
        PRIMARY KEY (driver_id, day, kind)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS driver_counted_events (event_id TEXT PRIMARY KEY) WITHOUT ROWID;`);
  },
  prepare(db: Database.Database) {
    const q = {
      at: db.prepare('SELECT 1 FROM score_fixes WHERE device_id = ? AND t = ?').pluck(),
      any: db.prepare('SELECT 1 FROM score_fixes WHERE device_id = ? LIMIT 1').pluck(),
      prev: db.prepare('SELECT * FROM score_fixes WHERE device_id = ? AND t < ? ORDER BY t DESC LIMIT 1'),
      next: db.prepare('SELECT * FROM score_fixes WHERE device_id = ? AND t > ? ORDER BY t ASC LIMIT 1'),
      insert: db.prepare(
        'INSERT INTO score_fixes (device_id, t, lat, lng, speed_kmh, driver_id, limit_kmh) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      prune: db.prepare('DELETE FROM score_fixes WHERE device_id = ? AND t < ?'),
      addDay: db.prepare(
        `INSERT INTO driver_days (driver_id, day, customer_id, distance_m, driving_ms, overspeed_ms) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(driver_id, day) DO UPDATE SET distance_m = distance_m + excluded.distance_m,
           driving_ms = driving_ms + excluded.driving_ms, overspeed_ms = overspeed_ms + excluded.overspeed_ms`,
      ),
      // A derived event can reach the log twice (EventStoreDB deduplicates appends with expectedRevision
      // "any" only best-effort); its event_id is the same both times, and counts once.
      firstSeen: db.prepare('INSERT OR IGNORE INTO driver_counted_events (event_id) VALUES (?)'),
      countEvent: db.prepare(
        `INSERT INTO driver_day_events (driver_id, day, kind, count) VALUES (?, ?, ?, 1)
         ON CONFLICT(driver_id, day, kind) DO UPDATE SET count = count + 1`,
      ),
    };
    // Driver and speed limit of a device, read once and remembered until an event may change them.
    const context = new BatchLookup(deviceContextLookup(db));
    // Devices with no stored fix, as far as is known (a driverless vehicle stores none; only this projection stores them).
    const noFixes = new BatchLookup((deviceId) => q.any.get(deviceId) === undefined);

    const add = (customerId: string, fix: StoredFix, c: Contribution, sign: 1 | -1) => {
      q.addDay.run(fix.driver_id, dayOf(fix.t), customerId, sign * c.distance_m, sign * c.driving_ms, sign * c.overspeed_ms);
    };

    const onFix = (d: PositionRecorded['data']) => {
      // A future-dated fix would become every later fix's "next" and open a day years ahead.
      if (!isUsableFix(d)) return;
      // Nobody drives it and it has no fixes to splice into: nothing to score (the common case of a fleet without drivers).
      if (context.get(d.device_id).driverId === null && noFixes.get(d.device_id)) return;
      // Two fixes with the same time: the first one stands.
      if (q.at.get(d.device_id, d.fix_time)) return;
      const prev = (q.prev.get(d.device_id, d.fix_time) as StoredFix | undefined) ?? null;
      const next = (q.next.get(d.device_id, d.fix_time) as StoredFix | undefined) ?? null;
      let driverId: string | null;
      let limit: number | null;
      if (next) {
        // Late: who drove then is best told by the fixes around it.
        const near = prev ?? next;
        driverId = near.driver_id;
        limit = near.limit_kmh;
      } else {
        ({ driverId, limitKmh: limit } = context.get(d.device_id));
        // A vehicle nobody drives scores nothing; its fixes are not kept.
        if (!driverId) return;
      }
      const fix: StoredFix = { t: d.fix_time, lat: d.lat, lng: d.lng, speed_kmh: d.speed_kmh, driver_id: driverId, limit_kmh: limit };
      q.insert.run(d.device_id, fix.t, fix.lat, fix.lng, fix.speed_kmh, fix.driver_id, fix.limit_kmh);
      noFixes.forget(d.device_id);
      if (prev && next) add(d.customer_id, next, stretch(prev, next, next.limit_kmh), -1);
      if (prev) add(d.customer_id, fix, stretch(prev, fix, fix.limit_kmh), 1);
      if (next) add(d.customer_id, next, stretch(fix, next, next.limit_kmh), 1);
      // Once a day per device, forget fixes too old to matter.
      if (!next && prev && dayOf(prev.t) !== dayOf(fix.t)) q.prune.run(d.device_id, fix.t - FIX_RETENTION_MS);
    };

    const onEvent = (d: DeviceEventRaised['data']) => {
      if (d.driver_id && q.firstSeen.run(d.event_id).changes === 1) q.countEvent.run(d.driver_id, dayOf(d.occurred_at), d.kind);
    };

    return batchHandler(
      (e) => {
        context.seen(e.type);
        if (e.type === 'PositionRecorded') onFix(e.data);
        else if (e.type === 'DeviceEventRaised') onEvent(e.data);
      },
      {
        flush() {
          context.flush();
          noFixes.flush();
        },
        discard() {
          context.discard();
          noFixes.discard();
        },
      },
    );
  },
};
