/**
 * Per-device detector state: plain JSON, persisted row by row (store.ts) so
 * detection continues across batches, restarts and replays.
 */
import type { RaiseInput, RaisedKind } from '../device-events.js';

/** A valid fix as the detectors remember it. */
export interface Fix {
  /** Id of the PositionRecorded event: the cause of whatever it triggers. */
  id: string;
  t: number;
  lat: number;
  lng: number;
  speed: number | null;
  heading: number | null;
}

/** A run of consecutive intervals of harsh braking or acceleration. */
export interface SpeedEpisode {
  kind: 'event.harsh_brake' | 'event.acceleration';
  start: Fix;
  end: Fix;
  /** Strongest rate seen, km/h per s (signed). */
  peak_rate: number;
}

/** A run of consecutive intervals of hard cornering in one direction. */
export interface TurnEpisode {
  /** 1 right (heading increasing), -1 left. */
  direction: 1 | -1;
  start: Fix;
  end: Fix;
  heading_change: number;
  peak_lateral: number;
}

/** A server detection waiting out the double-reporting window. */
export interface Held {
  kind: RaisedKind;
  from: number;
  to: number;
  input: RaiseInput;
}

/** Ignition-on to ignition-off, for the trip fields of `event.ignition_off`. */
export interface Trip {
  started_at: number;
  start_odometer_m: number | null;
  last_odometer_m: number | null;
  /** Great-circle sum over the trip's fixes, when the device sends no odometer. */
  distance_m: number;
  /** Set when a fix said ignition off; the trip is closed by the alarm or replaced by the next ignition on. */
  off_at: number | null;
}

/** One report (a record of the device) and the JT/T 808 state-alarm kinds it carried. */
export interface Report {
  t: number;
  kinds: RaisedKind[];
}

export interface DetectorState {
  /** The newest valid fix processed; older or equal fix times are late and detect nothing. */
  last_fix: Fix | null;
  /** Newest device time seen (fix, alarm, status): releases held detections. */
  clock: number;
  speed_episode: SpeedEpisode | null;
  turn_episode: TurnEpisode | null;
  /** False from an overspeed onset until the speed drops below limit − margin, the ignition goes off or the fixes pause. */
  overspeed_armed: boolean;
  /** When the device itself last reported each kind. */
  device_reported: Partial<Record<RaisedKind, number>>;
  /** The current and the previous report in arrival order: a state alarm the previous one carried continues. */
  reports: { prev: Report | null; cur: Report | null };
  held: Held[];
  trip: Trip | null;
}

export function initialState(): DetectorState {
  return {
    last_fix: null,
    clock: 0,
    speed_episode: null,
    turn_episode: null,
    overspeed_armed: true,
    device_reported: {},
    reports: { prev: null, cur: null },
    held: [],
    trip: null,
  };
}
