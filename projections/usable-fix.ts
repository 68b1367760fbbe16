/**
 * Which fixes count. A fix that cannot be true (core/fix-plausibility.ts:
 * coordinates off the globe, a speed above the ceiling, a time before 2000)
 * is kept in the log for forensics and used by nothing: not the history, not
 * the latest position, no detector, fence or score (`isPlausibleFix`).
 *
 * Which fixes may move a device's story forward: its latest position, the
 * safety detectors, geofence presence and driver-score distance all take a
 * fix's time as "now" for the device and ignore anything not newer. A single
 * fix dated years ahead (a GPS clock gone wrong, a GT06 set to local time)
 * would make every real fix after it look late and blind them all, so such a
 * fix is kept in the history but used by none of them.
 *
 * Decided from the event alone (fix time against the gateway's receipt
 * time, never the wall clock), so a replay decides the same.
 */
import type { PositionRecorded } from '../core/events.js';
import { implausibility } from '../core/fix-plausibility.js';

/**
 * A device time this far past the moment the gateway received it is a wrong
 * clock: nothing is received before it happens, so only the two clocks'
 * disagreement (seconds when both are right) is tolerated, with margin.
 */
export const MAX_AHEAD_OF_RECEIPT_MS = 10 * 60_000;

export function isFutureDated(deviceTime: number, receivedAt: number): boolean {
  return deviceTime - receivedAt > MAX_AHEAD_OF_RECEIPT_MS;
}

/** When a device report happened: its own time, or the receipt time when its clock is plainly wrong (an alarm is never dropped for it). */
export function believableTime(deviceTime: number, receivedAt: number): number {
  return isFutureDated(deviceTime, receivedAt) ? receivedAt : deviceTime;
}

type FixData = Pick<PositionRecorded['data'], 'valid' | 'lat' | 'lng' | 'speed_kmh' | 'fix_time' | 'received_at'>;

/**
 * A fix that can be true: the history keeps it (a fix the device marked invalid too, as
 * that, and a future-dated one in its place). Decided from the fields, not from `valid`,
 * so fixes stored before the gateway marked implausible ones are left out as well.
 */
export function isPlausibleFix(d: FixData): boolean {
  return implausibility(d.lat, d.lng, d.speed_kmh, d.fix_time) === null;
}

/** A valid, plausible fix with a believable time: the only kind that counts as the device's newest. */
export function isUsableFix(d: FixData): boolean {
  return d.valid && isPlausibleFix(d) && !isFutureDated(d.fix_time, d.received_at);
}
