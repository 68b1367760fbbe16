/**
 * Overspeed against the effective limit (device, else customer): one event at
 * the onset, then silence until the speed has dropped below the limit minus a
 * margin, so a vehicle hovering around the limit is not reported every fix.
 * A break in the data also re-arms it: a device that went silent while
 * speeding (tunnel, power cut, parked without a last slow fix) would otherwise
 * start its next trip disarmed and miss that trip's onset. Ignition off
 * re-arms it too (detect.ts).
 */
import { fixPosition, round1, type Detection } from './motion.js';
import type { Fix } from './state.js';
import { THRESHOLDS as T } from './thresholds.js';

export function stepOverspeed(
  wasArmed: boolean,
  prev: Fix | null,
  cur: Fix,
  limitKmh: number | null,
): { armed: boolean; detection: Detection | null } {
  // No limit: nothing to check, and a limit set later starts armed.
  if (limitKmh === null) return { armed: true, detection: null };
  const armed = wasArmed || (prev !== null && cur.t - prev.t > T.overspeedRearmGapMs);
  if (cur.speed === null) return { armed, detection: null };
  if (!armed) return { armed: cur.speed < limitKmh - T.overspeedRearmMarginKmh, detection: null };
  if (cur.speed <= limitKmh) return { armed: true, detection: null };
  return {
    armed: false,
    detection: {
      kind: 'event.overspeed',
      from: cur.t,
      to: cur.t,
      cause: `event.overspeed:${cur.id}`,
      occurredAt: cur.t,
      position: fixPosition(cur),
      fields: { limit_kmh: limitKmh, delta_kmh: round1(cur.speed - limitKmh) },
      context: {
        rule: 'speed_limit',
        speed_kmh: cur.speed,
        limit_kmh: limitKmh,
        rearm_below_kmh: limitKmh - T.overspeedRearmMarginKmh,
        fix_event_id: cur.id,
      },
    },
  };
}
