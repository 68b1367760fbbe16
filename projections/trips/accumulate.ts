/**
 * A device's odometer and engine hours, as the platform computes them: the
 * unit's own counter where it reports one (odometer: Teltonika IO 16, JT/T 808
 * item 0x01, GT06 mileage, all as `odometer_m`; engine: Teltonika IO 449, in
 * seconds), else the distance of its fixes and the time its ignition was on.
 * A value set to match the dashboard is kept as an offset to that base, so
 * the accumulator continues from it. Pure, over in-order fixes only.
 */
import { haversineM, MAX_PLAUSIBLE_KMH, MAX_STRETCH_MS } from '../driver-scores/segment.js';

export interface AccumulatorState {
  last: { t: number; lat: number; lng: number; speed_kmh: number | null; ignition: boolean | null } | null;
  /** Computed from the fixes: metres driven and milliseconds with the ignition on. */
  fixes_distance_m: number;
  fixes_engine_ms: number;
  /** The unit's own counters, last reported. */
  counter_odometer_m: number | null;
  counter_engine_s: number | null;
  /** Added to the base so the values match what was set. */
  odometer_offset_m: number;
  engine_offset_ms: number;
}

export const INITIAL_ACCUMULATORS: AccumulatorState = Object.freeze({
  last: null,
  fixes_distance_m: 0,
  fixes_engine_ms: 0,
  counter_odometer_m: null,
  counter_engine_s: null,
  odometer_offset_m: 0,
  engine_offset_ms: 0,
});

/** Below this the vehicle stands: drift adds no distance (as for driver scores and trips). */
const STANDING_KMH = 3;

export interface AccumulatorSample {
  t: number;
  lat: number;
  lng: number;
  speed_kmh: number | null;
  ignition: boolean | null;
  odometer_m: number | null;
  /** The unit's engine-hours counter in seconds (Teltonika IO 449), when sent. */
  engine_s: number | null;
}

export function engineCounterOf(attributes: Record<string, unknown>): number | null {
  const v = attributes.io449;
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
}

export function accumulate(s: AccumulatorState, fix: AccumulatorSample): AccumulatorState {
  let distance = s.fixes_distance_m;
  let engine = s.fixes_engine_ms;
  const prev = s.last;
  if (prev) {
    const dt = fix.t - prev.t;
    // Engine time is the ignition's state over the stretch, as the earlier fix reported it; a long silence tells nothing.
    if (prev.ignition === true && dt <= MAX_STRETCH_MS) engine += dt;
    const metres = haversineM(prev.lat, prev.lng, fix.lat, fix.lng);
    const impliedKmh = (metres / (dt / 1000)) * 3.6;
    const speed = Math.max(prev.speed_kmh ?? impliedKmh, fix.speed_kmh ?? impliedKmh);
    if (impliedKmh <= MAX_PLAUSIBLE_KMH && speed >= STANDING_KMH) distance += metres;
  }
  return {
    last: { t: fix.t, lat: fix.lat, lng: fix.lng, speed_kmh: fix.speed_kmh, ignition: fix.ignition },
    fixes_distance_m: distance,
    fixes_engine_ms: engine,
    counter_odometer_m: fix.odometer_m ?? s.counter_odometer_m,
    counter_engine_s: fix.engine_s ?? s.counter_engine_s,
    odometer_offset_m: s.odometer_offset_m,
    engine_offset_ms: s.engine_offset_ms,
  };
}

function odometerBase(s: AccumulatorState): number {
  return s.counter_odometer_m ?? s.fixes_distance_m;
}

function engineBase(s: AccumulatorState): number {
  return s.counter_engine_s !== null ? s.counter_engine_s * 1000 : s.fixes_engine_ms;
}

export function readAccumulators(s: AccumulatorState): { odometer_m: number; engine_ms: number } {
  return { odometer_m: odometerBase(s) + s.odometer_offset_m, engine_ms: engineBase(s) + s.engine_offset_ms };
}

/** The values set (null: unchanged) become the accumulators' values now. */
export function setAccumulators(s: AccumulatorState, set: { odometer_km: number | null; engine_hours: number | null }): AccumulatorState {
  return {
    ...s,
    odometer_offset_m: set.odometer_km === null ? s.odometer_offset_m : set.odometer_km * 1000 - odometerBase(s),
    engine_offset_ms: set.engine_hours === null ? s.engine_offset_ms : set.engine_hours * 3_600_000 - engineBase(s),
  };
}
