/**
 * Whether the gateway may write a queued command to a connected unit now.
 * Pure: the gateway asks it on login, on every new fix of a unit with held
 * commands, and before each send.
 *
 * - past `expires_at`: `expire`, whatever else holds (a stale engine cut
 *   never fires when the vehicle comes back into coverage);
 * - an `engine_stop` without `when: "now"`: `hold` until the latest fix shows
 *   the vehicle stopped (speed under 5 km/h, or ignition off where reported);
 *   without any fix the vehicle may be moving, so it is held too;
 * - anything else: `send`.
 */
import type { CommandSnapshot } from '../events/commands.js';
import { STOPPED_BELOW_KMH } from '../command-types.js';

/** What dispatch needs of the unit's latest report. */
export interface LatestFix {
  speed_kmh: number | null;
  ignition: boolean | null;
}

export type DispatchDecision = 'send' | 'hold' | 'expire';

export function isStopped(fix: LatestFix | null): boolean {
  if (!fix) return false;
  if (fix.ignition === false) return true;
  return fix.speed_kmh !== null && fix.speed_kmh < STOPPED_BELOW_KMH;
}

export function dispatchDecision(command: Pick<CommandSnapshot, 'type' | 'params' | 'expires_at'>, latestFix: LatestFix | null, now: number): DispatchDecision {
  if (now >= command.expires_at) return 'expire';
  if (command.type === 'engine_stop' && command.params.when !== 'now' && !isStopped(latestFix)) return 'hold';
  return 'send';
}
