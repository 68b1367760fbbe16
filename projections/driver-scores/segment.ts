/**
 * What the stretch between two consecutive valid fixes of a device adds to
 * its driver's day: distance, driving time, overspeed time. Pure, so the
 * in-order path and the late-fix splice use the very same numbers.
 */

export interface ScoreFix {
  t: number;
  lat: number;
  lng: number;
  speed_kmh: number | null;
}

export interface Contribution {
  distance_m: number;
  driving_ms: number;
  overspeed_ms: number;
}

/** Below this the vehicle is standing: GPS drift while parked must not add distance. */
export const MOVING_KMH = 3;
/** Faster than this between two fixes is a bad fix, not driving. */
export const MAX_PLAUSIBLE_KMH = 250;
/** Driving time counted for one stretch at most (a moving fix, silence, a moving fix again). */
export const DRIVING_GAP_CAP_MS = 5 * 60_000;
/** Longer silences break the trip: nothing is known about what happened in between. */
export const MAX_STRETCH_MS = 30 * 60_000;

export const NOTHING: Contribution = Object.freeze({ distance_m: 0, driving_ms: 0, overspeed_ms: 0 });

const EARTH_RADIUS_M = 6_371_008.8;

export function haversineM(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLng = (lng2 - lng1) * rad;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(a)));
}

/**
 * The stretch from `a` to `b` (b later). Its speed is the mean of the two
 * reported speeds (the one reported, or the implied speed when neither
 * reports); it is overspeed when that exceeds `limitKmh`.
 */
export function stretch(a: ScoreFix, b: ScoreFix, limitKmh: number | null): Contribution {
  const dt = b.t - a.t;
  if (dt <= 0 || dt > MAX_STRETCH_MS) return NOTHING;
  const distance = haversineM(a.lat, a.lng, b.lat, b.lng);
  const impliedKmh = (distance / (dt / 1000)) * 3.6;
  if (impliedKmh > MAX_PLAUSIBLE_KMH) return NOTHING;
  const speed =
    a.speed_kmh !== null && b.speed_kmh !== null ? (a.speed_kmh + b.speed_kmh) / 2 : (a.speed_kmh ?? b.speed_kmh ?? impliedKmh);
  if (speed < MOVING_KMH) return NOTHING;
  const driving = Math.min(dt, DRIVING_GAP_CAP_MS);
  return { distance_m: distance, driving_ms: driving, overspeed_ms: limitKmh !== null && speed > limitKmh ? driving : 0 };
}
