/**
 * No double reporting: a server detection of kind K is dropped when the device
 * itself reported K within `dedupWindowMs` of the detection's span. A report
 * already seen drops it at once; for one still to come the detection is held
 * until the device's clock is past the window (or the device disconnects).
 */
import type { RaisedKind } from '../device-events.js';
import type { DetectorState, Held } from './state.js';
import { THRESHOLDS as T } from './thresholds.js';

const near = (h: Pick<Held, 'from' | 'to'>, at: number): boolean => at >= h.from - T.dedupWindowMs && at <= h.to + T.dedupWindowMs;

/** Holds a server detection unless the device already reported the same kind near it. */
export function admit(state: DetectorState, h: Held): DetectorState {
  const reported = state.device_reported[h.kind];
  if (reported !== undefined && near(h, reported)) return state;
  return { ...state, held: [...state.held, h] };
}

/** The device reported `kind` at `at`: held server detections of that kind near it are dropped. */
export function dropHeld(held: Held[], kind: RaisedKind, at: number): Held[] {
  return held.filter((h) => h.kind !== kind || !near(h, at));
}

/** Detections whose window has passed on the device's clock (all of them when `all`). */
export function releaseHeld(held: Held[], clock: number, all = false): { held: Held[]; released: Held[] } {
  const released = held.filter((h) => all || clock > h.to + T.dedupWindowMs);
  return released.length === 0 ? { held, released } : { held: held.filter((h) => !released.includes(h)), released };
}
