/**
 * How long the gateway waits for a unit's answer to a command, try by try. JT/T 808 sends
 * the same message again on the standard's growing timeout (retransmit.ts); Teltonika and
 * GT06 have no retransmission, so a command gets one wait and then fails with `no_reply`.
 */
import type { DeviceProtocol } from '../../core/events.js';
import { retransmitTimeoutMs } from '../protocols/jt808/retransmit.js';

/** Tries of a JT/T 808 message: the first and two retransmissions (the standard's parameter 0x0003). */
export const JT808_TRIES = 3;

/** The wait after each write of the same bytes; a command with no answer after the last is failed. */
export function replyWaitsMs(protocol: DeviceProtocol, baseMs: number): number[] {
  if (protocol !== 'jt808') return [baseMs];
  return Array.from({ length: JT808_TRIES }, (_, i) => retransmitTimeoutMs(i + 1, baseMs));
}
