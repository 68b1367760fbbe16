/**
 * Whether a fix can be true at all, whatever the device says about it. A
 * frame can pass its checksum and still carry nonsense: a GT06 0x10 packet
 * has no checksum (one flipped bit gave a latitude of 653), firmware writes
 * garbage into a field, an attacker crafts a well-formed frame. Such fixes
 * are still stored, for forensics, but marked invalid by the gateway
 * (gateway/to-events.ts) and never used as a position by the projections
 * (projections/usable-fix.ts): not the latest position, not history, no
 * geofence crossing, detection or score.
 *
 * One pure function of the fix's own fields, so the gateway and a replay of
 * fixes stored before this rule existed decide the same.
 */

/**
 * No tracked road vehicle goes this fast: the fastest production cars and
 * high-speed trains stay under 450 km/h. A reading above it is a corrupt
 * field (the probe sent 65,000 km/h), and one such fix would make the
 * harsh-driving detectors and the score's distance see an impossible jump.
 */
export const MAX_PLAUSIBLE_SPEED_KMH = 500;

/**
 * Fixes dated before 2000 come from a clock that was never set (GPS receivers
 * without an almanac start at their epoch, 1980 or 1970) or from a decoding
 * error; no unit we support existed then.
 */
export const EARLIEST_PLAUSIBLE_FIX_TIME = Date.UTC(2000, 0, 1);

export type ImplausibleFix = 'not_a_number' | 'latitude_out_of_range' | 'longitude_out_of_range' | 'speed_out_of_range' | 'time_before_2000';

/** Why this fix cannot be true, or null when it can. Speed may be unknown (null). */
export function implausibility(lat: number, lng: number, speedKmh: number | null, fixTime: number): ImplausibleFix | null {
  if (!Number.isFinite(lat) || !Number.isFinite(lng) || !Number.isFinite(fixTime)) return 'not_a_number';
  if (speedKmh !== null && !Number.isFinite(speedKmh)) return 'not_a_number';
  if (lat < -90 || lat > 90) return 'latitude_out_of_range';
  if (lng < -180 || lng > 180) return 'longitude_out_of_range';
  if (speedKmh !== null && !(speedKmh >= 0 && speedKmh <= MAX_PLAUSIBLE_SPEED_KMH)) return 'speed_out_of_range';
  if (fixTime < EARLIEST_PLAUSIBLE_FIX_TIME) return 'time_before_2000';
  return null;
}
