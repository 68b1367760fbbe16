/**
 * Cuts a device's fixes into trips, stops and idles, one fix at a time and in
 * fix-time order (docs/trips.md has the rules). Pure: the state is plain JSON
 * kept per device, and each step returns the rows to write, so the in-order
 * path and a late fix's re-fold from an earlier trip make the very same rows.
 *
 * A trip is a run of active fixes (ignition on where the unit reports it,
 * else moving), pauses shorter than the minimal stop bridged. It closes once
 * it has been inactive for the minimal stop; a run too short or too near is
 * dropped and its time stays in the stop around it. A stop runs from one
 * trip's end to the next trip's start; an idle from the first standing fix
 * with the engine on to the first fix that is not.
 */
import type { TripRules } from '../../core/trip-rules.js';
import { haversineM, MAX_PLAUSIBLE_KMH } from '../driver-scores/segment.js';

/** A fix as the trips read model keeps it: the accumulators read when it was applied, and the device's driver then. */
export interface TripFix {
  t: number;
  lat: number;
  lng: number;
  speed_kmh: number | null;
  ignition: boolean | null;
  odometer_m: number;
  engine_s: number;
  driver_id: string | null;
  /** Ids of the customer's geofences containing it (sorted), as they were when it was applied. */
  geofences: string[];
}

/** After this many fixes in a row too far from the last accepted one, the vehicle did move there (a tow, a ferry, a long gap). */
const JUMPS_BEFORE_RELOCATION = 3;

export interface TripRow {
  start: TripFix;
  end: TripFix;
  distance_m: number;
  max_speed_kmh: number;
  idle_ms: number;
}

export interface SpanRow {
  start_t: number;
  end_t: number | null;
  lat: number;
  lng: number;
  /** Those of the fix it starts at. */
  geofences: string[];
}

/** What a step writes: rows are keyed by device and start time, so an upsert replaces and a delete names the start. */
export type TripWrite =
  | { table: 'trips'; row: TripRow }
  | { table: 'stops' | 'idles'; row: SpanRow }
  | { table: 'stops'; delete: number };

interface Run {
  start: TripFix;
  /** The last active fix, or the fix that began the pause. */
  last: TripFix;
  distance_m: number;
  max_speed_kmh: number;
  idle_ms: number;
  /** Long and far enough to be a trip: the stop before it is closed. */
  qualified: boolean;
  /** The first inactive fix of a pause, the trip's end should the pause last. */
  paused_at: TripFix | null;
  /** Idling closed during the pause: the trip's if the pause is bridged. */
  pause_idle_ms: number;
}

export interface TripFoldState {
  last_t: number | null;
  /** The last fix distance was measured from, and how many fixes in a row were refused as jumps from it. */
  anchor: TripFix | null;
  jumps: number;
  run: Run | null;
  /** The stop in progress (its row is written with end_t null). */
  stop: SpanRow | null;
  /** The idle in progress, written once it is long enough. */
  idle: { start: TripFix; written: boolean } | null;
}

export const INITIAL_TRIP_STATE: TripFoldState = Object.freeze({ last_t: null, anchor: null, jumps: 0, run: null, stop: null, idle: null });

/** The state a re-fold from a stored trip's start begins in: standing, in the stop that trip closed. */
export function stateBeforeTrip(stop: SpanRow | null): TripFoldState {
  return { ...INITIAL_TRIP_STATE, stop: stop ? { ...stop, end_t: null } : null };
}

/**
 * The ignition a status record without a location reported (a GT06 heartbeat's ACC bit): the
 * device's state, not a position. Fixes that carry no ignition of their own take it (GT06 0x12
 * packets have no ACC), so such a unit's trips start and end by its key; it holds for
 * REPORTED_IGNITION_HOLD_MS from its report, after which speed decides again.
 */
export interface ReportedIgnition {
  on: boolean;
  t: number;
}

/** Longer than the heartbeat period units are set to (minutes), so a state is not dropped between two reports. */
export const REPORTED_IGNITION_HOLD_MS = 30 * 60_000;

/** The ignition a fix is folded with: its own, else the device's last reported one when recent enough. */
export function ignitionOf(own: boolean | null, t: number, reported: ReportedIgnition | null): boolean | null {
  if (own !== null || reported === null) return own;
  return Math.abs(t - reported.t) <= REPORTED_IGNITION_HOLD_MS ? reported.on : null;
}

export function isActive(fix: TripFix, rules: TripRules): boolean {
  if (rules.trip_source === 'auto' && fix.ignition !== null) return fix.ignition;
  return (fix.speed_kmh ?? 0) >= rules.moving_speed_kmh;
}

function isIdling(fix: TripFix, rules: TripRules): boolean {
  return fix.ignition === true && (fix.speed_kmh ?? 0) < rules.moving_speed_kmh;
}

/** Metres from the last accepted fix, and whether `cur` becomes the new one (a jump is refused, up to a relocation). */
function measure(state: TripFoldState, cur: TripFix, rules: TripRules): { metres: number; accepted: boolean } {
  const a = state.anchor;
  if (!a) return { metres: 0, accepted: true };
  const metres = haversineM(a.lat, a.lng, cur.lat, cur.lng);
  const dt = (cur.t - a.t) / 1000;
  const impliedKmh = (metres / dt) * 3.6;
  if (impliedKmh > MAX_PLAUSIBLE_KMH && state.jumps + 1 < JUMPS_BEFORE_RELOCATION) return { metres: 0, accepted: false };
  // Standing at both ends: what moved was the GPS, not the vehicle.
  const moving = Math.max(a.speed_kmh ?? impliedKmh, cur.speed_kmh ?? impliedKmh) >= rules.moving_speed_kmh;
  return { metres: moving && impliedKmh <= MAX_PLAUSIBLE_KMH ? metres : 0, accepted: true };
}

/** A stop or idle beginning at `fix`, where it stands. */
function spanAt(fix: TripFix, endT: number | null): SpanRow {
  return { start_t: fix.t, end_t: endT, lat: fix.lat, lng: fix.lng, geofences: fix.geofences };
}

function newRun(fix: TripFix): Run {
  return { start: fix, last: fix, distance_m: 0, max_speed_kmh: fix.speed_kmh ?? 0, idle_ms: 0, qualified: false, paused_at: null, pause_idle_ms: 0 };
}

function qualifies(run: Run, rules: TripRules): boolean {
  return run.distance_m >= rules.min_trip_distance_m && run.last.t - run.start.t >= rules.min_trip_duration_s * 1000;
}

/** Applies one fix, strictly later than the last one folded. */
export function foldFix(state: TripFoldState, cur: TripFix, rules: TripRules): { state: TripFoldState; writes: TripWrite[] } {
  const writes: TripWrite[] = [];
  const { metres, accepted } = measure(state, cur, rules);
  let run = state.run ? { ...state.run } : null;
  let stop = state.stop;
  let idle = state.idle;

  // Idling first, while the trip is as it was before this fix.
  if (idle && !isIdling(cur, rules)) {
    const ms = cur.t - idle.start.t;
    if (ms >= rules.min_idle_duration_s * 1000) {
      writes.push({ table: 'idles', row: spanAt(idle.start, cur.t) });
      if (run && run.paused_at) run.pause_idle_ms += ms;
      else if (run) run.idle_ms += ms;
    }
    idle = null;
  } else if (!idle && isIdling(cur, rules)) {
    idle = { start: cur, written: false };
  }
  if (idle && !idle.written && cur.t - idle.start.t >= rules.min_idle_duration_s * 1000) {
    writes.push({ table: 'idles', row: spanAt(idle.start, null) });
    idle = { start: idle.start, written: true };
  }

  const minStopMs = rules.min_stop_duration_s * 1000;
  /** Ends the run at `end`: a trip if it qualified (a stop begins where it ended), else dropped into the stop. */
  const close = (r: Run, end: TripFix) => {
    if (r.qualified) {
      writes.push({ table: 'trips', row: { start: r.start, end, distance_m: r.distance_m, max_speed_kmh: r.max_speed_kmh, idle_ms: r.idle_ms } });
      stop = spanAt(end, null);
      writes.push({ table: 'stops', row: stop });
    } else if (!stop) {
      stop = spanAt(r.start, null);
      writes.push({ table: 'stops', row: stop });
    }
  };

  if (isActive(cur, rules)) {
    if (run && run.paused_at && cur.t - run.paused_at.t >= minStopMs) {
      // Silent through a long pause: the trip ended where it paused.
      close(run, run.paused_at);
      run = null;
    }
    if (run) {
      if (run.paused_at) {
        run.idle_ms += run.pause_idle_ms;
        run.paused_at = null;
        run.pause_idle_ms = 0;
      }
      run.distance_m += metres;
      run.last = cur;
      run.max_speed_kmh = Math.max(run.max_speed_kmh, cur.speed_kmh ?? 0);
    } else {
      run = newRun(cur);
    }
    if (!run.qualified && qualifies(run, rules)) {
      run.qualified = true;
      if (stop) {
        // A stop shorter than the minimum (only the first one can be: others begin at a trip's end) is no stop.
        if (run.start.t - stop.start_t >= minStopMs) writes.push({ table: 'stops', row: { ...stop, end_t: run.start.t } });
        else writes.push({ table: 'stops', delete: stop.start_t });
        stop = null;
      }
    }
  } else if (run) {
    if (!run.paused_at) {
      // The decelerating stretch into the stop is the trip's.
      run.distance_m += metres;
      run.paused_at = cur;
    } else if (cur.t - run.paused_at.t >= minStopMs) {
      close(run, run.paused_at);
      run = null;
    }
  } else if (!stop) {
    stop = spanAt(cur, null);
    writes.push({ table: 'stops', row: stop });
  }

  const anchor = accepted ? cur : state.anchor;
  return { state: { last_t: cur.t, anchor, jumps: accepted ? 0 : state.jumps + 1, run, stop, idle }, writes };
}
