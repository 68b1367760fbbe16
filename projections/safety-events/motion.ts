/**
 * Harsh braking, acceleration and cornering from consecutive valid fixes.
 * Each interval between two fixes is classified; consecutive qualifying
 * intervals of the same kind form one episode (one manoeuvre, one event),
 * judged when it ends: it must last `minDurationMs`.
 */
import type { RaiseInput, RaisedKind } from '../device-events.js';
import type { Fix, SpeedEpisode, TurnEpisode } from './state.js';
import { THRESHOLDS as T } from './thresholds.js';

/** What a detector found, before device, customer and driver are attached. */
export interface Detection {
  kind: RaisedKind;
  /** Device-time span it covers, for the double-reporting window. */
  from: number;
  to: number;
  /** Unique description of the cause: the id of the event it is derived from. */
  cause: string;
  occurredAt: number;
  position: RaiseInput['position'];
  fields: Record<string, number | string | null>;
  context: Record<string, unknown>;
}

export function fixPosition(f: Fix): NonNullable<Detection['position']> {
  return { lat: f.lat, lng: f.lng, speed_kmh: f.speed, heading_deg: f.heading, timestamp: f.t };
}

export const round1 = (x: number): number => Math.round(x * 10) / 10;
const iso = (ms: number): string => new Date(ms).toISOString();

/** A usable interval: both fixes have speeds and are close enough in time to describe one manoeuvre. */
function interval(prev: Fix | null, cur: Fix): { prev: Fix; dtS: number } | null {
  if (!prev || prev.speed === null || cur.speed === null) return null;
  const dt = cur.t - prev.t;
  return dt > 0 && dt <= T.maxFixGapMs ? { prev, dtS: dt / 1000 } : null;
}

// --- speed changes ---------------------------------------------------------

function speedKind(rate: number): SpeedEpisode['kind'] | null {
  if (Math.abs(rate) > T.implausibleKmhPerS) return null;
  if (rate <= -T.harshBrakeKmhPerS) return 'event.harsh_brake';
  if (rate >= T.harshAccelerationKmhPerS) return 'event.acceleration';
  return null;
}

/** Advances the braking/acceleration episode with fix `cur`; returns the detection of an episode that just ended. */
export function stepSpeed(
  episode: SpeedEpisode | null,
  prev: Fix | null,
  cur: Fix,
): { episode: SpeedEpisode | null; detection: Detection | null } {
  const iv = interval(prev, cur);
  const rate = iv ? (cur.speed! - iv.prev.speed!) / iv.dtS : null;
  const kind = rate === null ? null : speedKind(rate);
  if (kind && rate !== null && episode && episode.kind === kind && episode.end.id === iv!.prev.id) {
    const peak = kind === 'event.harsh_brake' ? Math.min(episode.peak_rate, rate) : Math.max(episode.peak_rate, rate);
    return { episode: { ...episode, end: cur, peak_rate: peak }, detection: null };
  }
  return {
    episode: kind && rate !== null ? { kind, start: iv!.prev, end: cur, peak_rate: rate } : null,
    detection: episode ? judgeSpeed(episode) : null,
  };
}

export function judgeSpeed(e: SpeedEpisode): Detection | null {
  const duration = e.end.t - e.start.t;
  if (duration < T.minDurationMs) return null;
  const threshold = e.kind === 'event.harsh_brake' ? -T.harshBrakeKmhPerS : T.harshAccelerationKmhPerS;
  return {
    kind: e.kind,
    from: e.start.t,
    to: e.end.t,
    cause: `${e.kind}:${e.start.id}`,
    occurredAt: e.start.t,
    position: fixPosition(e.start),
    fields: { delta_kmh: round1(e.end.speed! - e.start.speed!), duration_ms: duration },
    context: {
      rule: 'speed_change',
      speed_before_kmh: e.start.speed,
      speed_after_kmh: e.end.speed,
      started_at: iso(e.start.t),
      ended_at: iso(e.end.t),
      peak_rate_kmh_per_s: round1(e.peak_rate),
      threshold_kmh_per_s: threshold,
      min_duration_ms: T.minDurationMs,
      end_position: { lat: e.end.lat, lng: e.end.lng },
      fix_event_ids: [e.start.id, e.end.id],
    },
  };
}

// --- cornering -------------------------------------------------------------

/** Signed heading change in (-180, 180]. */
export function headingChange(from: number, to: number): number {
  const d = (((to - from) % 360) + 540) % 360 - 180;
  return d === -180 ? 180 : d;
}

/** Advances the cornering episode with fix `cur`; returns the detection of an episode that just ended. */
export function stepTurn(
  episode: TurnEpisode | null,
  prev: Fix | null,
  cur: Fix,
): { episode: TurnEpisode | null; detection: Detection | null } {
  const iv = interval(prev, cur);
  let next: TurnEpisode | null = null;
  if (iv && iv.prev.heading !== null && cur.heading !== null && Math.min(iv.prev.speed!, cur.speed!) >= T.curveMinSpeedKmh) {
    const dHeading = headingChange(iv.prev.heading, cur.heading);
    const meanSpeedMs = (iv.prev.speed! + cur.speed!) / 2 / 3.6;
    const lateral = meanSpeedMs * ((Math.abs(dHeading) / iv.dtS) * Math.PI) / 180;
    if (lateral >= T.curveLateralMs2 && lateral <= T.implausibleLateralMs2) {
      const direction = dHeading > 0 ? 1 : -1;
      if (episode && episode.direction === direction && episode.end.id === iv.prev.id) {
        const extended = {
          ...episode,
          end: cur,
          heading_change: episode.heading_change + dHeading,
          peak_lateral: Math.max(episode.peak_lateral, lateral),
        };
        return { episode: extended, detection: null };
      }
      next = { direction, start: iv.prev, end: cur, heading_change: dHeading, peak_lateral: lateral };
    }
  }
  return { episode: next, detection: episode ? judgeTurn(episode) : null };
}

export function judgeTurn(e: TurnEpisode): Detection | null {
  const duration = e.end.t - e.start.t;
  if (duration < T.minDurationMs) return null;
  return {
    kind: 'event.curve',
    from: e.start.t,
    to: e.end.t,
    cause: `event.curve:${e.start.id}`,
    occurredAt: e.start.t,
    position: fixPosition(e.start),
    // docs/api-decisions.md: harsh kinds carry the signed speed change over the manoeuvre.
    fields: { delta_kmh: round1(e.end.speed! - e.start.speed!), duration_ms: duration },
    context: {
      rule: 'lateral_acceleration',
      direction: e.direction === 1 ? 'right' : 'left',
      heading_change_deg: round1(e.heading_change),
      peak_lateral_accel_ms2: round1(e.peak_lateral),
      peak_lateral_accel_g: Math.round((e.peak_lateral / 9.81) * 100) / 100,
      threshold_ms2: T.curveLateralMs2,
      min_speed_kmh: T.curveMinSpeedKmh,
      speed_before_kmh: e.start.speed,
      speed_after_kmh: e.end.speed,
      started_at: iso(e.start.t),
      ended_at: iso(e.end.t),
      end_position: { lat: e.end.lat, lng: e.end.lng },
      fix_event_ids: [e.start.id, e.end.id],
    },
  };
}
