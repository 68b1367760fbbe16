/**
 * The trip an `event.ignition_off` closes: started by the first fix with
 * ignition on (or the device's ignition-on alarm), measured by the odometer
 * when the device sends one, else by the great-circle sum of its fixes.
 */
import type { Fix, Trip } from './state.js';

const EARTH_RADIUS_M = 6_371_008.8;

export function haversineM(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (b.lng - a.lng) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

function newTrip(at: number, odometerM: number | null): Trip {
  return { started_at: at, start_odometer_m: odometerM, last_odometer_m: odometerM, distance_m: 0, off_at: null };
}

/** Follows the trip with an in-order valid fix (`prev` is the fix before it). */
export function tripOnFix(trip: Trip | null, prev: Fix | null, cur: Fix, ignition: boolean | null, odometerM: number | null): Trip | null {
  const active = trip !== null && trip.off_at === null;
  if (!active) return ignition === true ? newTrip(cur.t, odometerM) : trip;
  // Every field spelled out, in newTrip's order (per fix, `{ ...trip, ... }` took V8's slow paths).
  return {
    started_at: trip.started_at,
    start_odometer_m: trip.start_odometer_m ?? odometerM,
    last_odometer_m: odometerM ?? trip.last_odometer_m,
    distance_m: trip.distance_m + (prev ? haversineM(prev, cur) : 0),
    // The ignition-off alarm of the same record comes after its fix: keep the trip for it.
    off_at: ignition === false ? cur.t : null,
  };
}

export function tripOnIgnitionOn(trip: Trip | null, at: number): Trip {
  return trip !== null && trip.off_at === null ? trip : newTrip(at, null);
}

/** The `event.ignition_off` fields; null values when no trip start was seen. */
export function tripFields(trip: Trip | null, at: number): { trip_distance_km: number | null; trip_duration_s: number | null } {
  if (!trip || trip.started_at > at) return { trip_distance_km: null, trip_duration_s: null };
  const byOdometer =
    trip.start_odometer_m !== null && trip.last_odometer_m !== null && trip.last_odometer_m >= trip.start_odometer_m
      ? trip.last_odometer_m - trip.start_odometer_m
      : null;
  return {
    trip_distance_km: Math.round(byOdometer ?? trip.distance_m) / 1000,
    trip_duration_s: Math.round((at - trip.started_at) / 1000),
  };
}
