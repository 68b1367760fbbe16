/** Daily score totals of drivers, from the driver-scores read model. */
import type Database from 'better-sqlite3';
import { addDays } from '../../projections/driver-scores/days.js';
import { sumTotals, type ScoreTotals } from '../../projections/driver-scores/score.js';
import { stmt } from './statements.js';

/** Days of the window behind the current score. */
export const CURRENT_SCORE_DAYS = 7;

/** Totals per day of one driver for days in [from, to). */
export function dailyTotals(db: Database.Database, driverId: string, from: string, to: string): Map<string, ScoreTotals> {
  const out = new Map<string, ScoreTotals>();
  const days = stmt(db, 'SELECT day, distance_m, driving_ms, overspeed_ms FROM driver_days WHERE driver_id = ? AND day >= ? AND day < ?').all(
    driverId,
    from,
    to,
  ) as Array<{ day: string; distance_m: number; driving_ms: number; overspeed_ms: number }>;
  const entry = (day: string) => {
    let t = out.get(day);
    if (!t) {
      t = { distance_m: 0, driving_ms: 0, overspeed_ms: 0, counts: {} };
      out.set(day, t);
    }
    return t as ScoreTotals & { counts: Record<string, number> };
  };
  for (const d of days) Object.assign(entry(d.day), { distance_m: d.distance_m, driving_ms: d.driving_ms, overspeed_ms: d.overspeed_ms });
  const events = stmt(db, 'SELECT day, kind, count FROM driver_day_events WHERE driver_id = ? AND day >= ? AND day < ?').all(
    driverId,
    from,
    to,
  ) as Array<{ day: string; kind: string; count: number }>;
  for (const e of events) entry(e.day).counts[e.kind] = e.count;
  return out;
}

/**
 * A day anchors the window once some driver of the customer drove on it: a
 * parked vehicle's fixes open a day row with no distance, and the float
 * residue of spliced late fixes is far below a metre.
 */
const ANCHOR_MIN_DISTANCE_M = 1;

/**
 * The window of the current score: the 7 UTC days ending with the newest day
 * on which any of the customer's drivers drove. Anchored to the data rather
 * than the wall clock, so a replay of the log gives the same scores; a day
 * with fixes but no distance does not move it, and a fix dated in the future
 * makes no day at all (projections/usable-fix.ts).
 */
export function currentWindow(db: Database.Database, customerId: string): { from: string; to: string } | null {
  const newest = stmt(db, 'SELECT day FROM driver_days WHERE customer_id = ? AND distance_m >= ? ORDER BY day DESC LIMIT 1')
    .pluck()
    .get(customerId, ANCHOR_MIN_DISTANCE_M) as string | undefined;
  return newest ? { from: addDays(newest, 1 - CURRENT_SCORE_DAYS), to: addDays(newest, 1) } : null;
}

/** Totals of the current window, per driver. */
export function currentTotals(db: Database.Database, customerId: string, driverIds: readonly string[]): Map<string, ScoreTotals> {
  const out = new Map<string, ScoreTotals>();
  const window = currentWindow(db, customerId);
  if (!window) return out;
  for (const id of driverIds) out.set(id, sumTotals(dailyTotals(db, id, window.from, window.to).values()));
  return out;
}
