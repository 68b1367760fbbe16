/**
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

type FixData = Pick<PositionRecorded['data'], 'valid' | 'lat' | 'lng' | 'fix_time' | 'received_at'>;

/** A valid fix with a real location and a believable time: the only kind that counts as the device's newest. */
export function isUsableFix(d: FixData): boolean {
  return d.valid && Number.isFinite(d.lat) && Number.isFinite(d.lng) && !isFutureDated(d.fix_time, d.received_at);
}
