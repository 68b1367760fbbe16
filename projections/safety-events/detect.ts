/**
 * The safety detector of one device as a pure function:
 * (state, event, env) -> {state, raised}. It reads no clock and no database;
 * the projection looks up `env` (driver and speed limit as the read models
 * have them when the event is applied) and persists the state.
 */
import type { AlarmReported, DeviceDisconnected, PositionRecorded, StatusReported } from '../../core/events.js';
import { raiseDeviceEvent, type RaiseInput } from '../device-events.js';
import { believableTime, isUsableFix } from '../usable-fix.js';
import type { DerivedEvent } from '../projection.js';
import { continuesStateAlarm, deviceAlarmDetection, enterReport, isStateAlarm } from './device-alarms.js';
import { admit, dropHeld, releaseHeld } from './hold.js';
import { stepSpeed, stepTurn, judgeSpeed, judgeTurn, type Detection } from './motion.js';
import { stepOverspeed } from './overspeed.js';
import type { DetectorState, Fix } from './state.js';
import { tripOnFix, tripOnIgnitionOn } from './trip.js';

export type DetectorEvent = { id: string } & (PositionRecorded | AlarmReported | StatusReported | DeviceDisconnected);

export interface DetectorEnv {
  /** The device's driver now (the read model is updated before detectors see the event). */
  driverId: string | null;
  /** Effective speed limit (device, else customer), or null: no overspeed check. */
  limitKmh: number | null;
}

export interface DetectResult {
  state: DetectorState;
  raised: DerivedEvent[];
}

export function detect(state: DetectorState, e: DetectorEvent, env: DetectorEnv): DetectResult {
  switch (e.type) {
    case 'PositionRecorded':
      return onFix(state, e.id, e.data, env);
    case 'AlarmReported':
      return onAlarm(state, e.id, e.data, env);
    case 'StatusReported': {
      const at = believableTime(e.data.at, e.data.received_at);
      return release({ ...state, clock: Math.max(state.clock, at), reports: enterReport(state.reports, at) });
    }
    case 'DeviceDisconnected':
      return onDisconnect(state, e.data, env);
  }
}

type Ids = Pick<RaiseInput, 'customerId' | 'deviceId' | 'driverId'>;

function toInput(d: Detection, ids: Ids, source: 'device' | 'server'): RaiseInput {
  return { ...ids, kind: d.kind, cause: d.cause, occurredAt: d.occurredAt, source, position: d.position, fields: d.fields, context: d.context };
}

function hold(state: DetectorState, detections: Array<Detection | null>, ids: Ids): DetectorState {
  let s = state;
  for (const d of detections) if (d) s = admit(s, { kind: d.kind, from: d.from, to: d.to, input: toInput(d, ids, 'server') });
  return s;
}

function release(state: DetectorState, all = false, first: DerivedEvent[] = []): DetectResult {
  const { held, released } = releaseHeld(state.held, state.clock, all);
  // Most fixes release nothing: the state goes on as it is (a copy per fix was a measurable share of a replay).
  if (released.length === 0) return { state, raised: first };
  return { state: { ...state, held }, raised: [...released.map((h) => raiseDeviceEvent(h.input)), ...first] };
}

function onFix(state: DetectorState, id: string, d: PositionRecorded['data'], env: DetectorEnv): DetectResult {
  // A record's fix and alarms share one report time: the believable one, so a clock far ahead still groups them.
  const reports = enterReport(state.reports, believableTime(d.fix_time, d.received_at));
  // Invalid or future-dated fixes (usable-fix.ts) and late ones (not newer than the last processed) detect nothing.
  if (!isUsableFix(d) || (state.last_fix && d.fix_time <= state.last_fix.t)) return release({ ...state, reports });
  const cur: Fix = { id, t: d.fix_time, lat: d.lat, lng: d.lng, speed: d.speed_kmh, heading: d.heading_deg };
  const prev = state.last_fix;
  const speed = stepSpeed(state.speed_episode, prev, cur);
  const turn = stepTurn(state.turn_episode, prev, cur);
  const over = stepOverspeed(state.overspeed_armed, prev, cur, env.limitKmh);
  const ids = { customerId: d.customer_id, deviceId: d.device_id, driverId: env.driverId };
  // Every field spelled out, in initialState's order: `{ ...state, reports, ... }` went through V8's slow
  // paths (a copy, then a runtime call per field defined over it), several times the cost of the rest of
  // detect(); the trip is built the same way (trip.ts; docs/performance.md).
  const next: DetectorState = {
    last_fix: cur,
    clock: Math.max(state.clock, d.fix_time),
    speed_episode: speed.episode,
    turn_episode: turn.episode,
    // Ignition off ends the trip, and with it any overspeed still going on: the next onset is a new one.
    overspeed_armed: over.armed || d.ignition === false,
    device_reported: state.device_reported,
    reports,
    held: state.held,
    trip: tripOnFix(state.trip, prev, cur, d.ignition, d.odometer_m),
  };
  return release(hold(next, [speed.detection, turn.detection, over.detection], ids));
}

function onAlarm(state: DetectorState, id: string, d: AlarmReported['data'], env: DetectorEnv): DetectResult {
  const kind = d.kind;
  // From a clock far ahead, the alarm is taken as happening when received: that time, not the
  // device's, moves the clock that releases held detections, the double-reporting times and the trip.
  const at = believableTime(d.occurred_at, d.received_at);
  const ids = { customerId: d.customer_id, deviceId: d.device_id, driverId: env.driverId };
  let reports = state.reports;
  let repeated = false;
  if (isStateAlarm(d)) {
    reports = enterReport(reports, at);
    repeated = continuesStateAlarm(reports, kind, at);
    reports = { ...reports, cur: { t: at, kinds: [...reports.cur!.kinds, kind] } };
  }
  const entry = repeated ? null : deviceAlarmDetection(id, d, state, env.limitKmh);
  let trip = state.trip;
  if (kind === 'event.ignition_on') trip = tripOnIgnitionOn(trip, at);
  if (kind === 'event.ignition_off' && trip && trip.started_at <= at) trip = null;
  const s: DetectorState = {
    ...state,
    // An ignition-off ends an overspeed, unless it is a late report from before the last fix.
    overspeed_armed: state.overspeed_armed || (kind === 'event.ignition_off' && !(state.last_fix && at < state.last_fix.t)),
    clock: Math.max(state.clock, at),
    device_reported: { ...state.device_reported, [kind]: Math.max(state.device_reported[kind] ?? at, at) },
    reports,
    held: dropHeld(state.held, kind, at),
    trip,
  };
  return release(s, false, entry ? [raiseDeviceEvent(toInput(entry, ids, 'device'))] : []);
}

/** The device went away: episodes end where they are and nothing more is waited for. */
function onDisconnect(state: DetectorState, d: DeviceDisconnected['data'], env: DetectorEnv): DetectResult {
  const ids = { customerId: d.customer_id, deviceId: d.device_id, driverId: env.driverId };
  const closing = [state.speed_episode ? judgeSpeed(state.speed_episode) : null, state.turn_episode ? judgeTurn(state.turn_episode) : null];
  return release(hold({ ...state, speed_episode: null, turn_episode: null }, closing, ids), true);
}
