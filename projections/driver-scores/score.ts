/**
 * The driver score of docs/api-decisions.md, as one pure function of a period's totals:
 * score = clamp(100 - sum_k weight_k * count_k * 100 / distance_km, 0, 100),
 * except overspeed, which costs weight * 100 * overspeed_s / driving_s (its
 * share of driving time) rather than a count. Under 5 km the period is not
 * rated: score, per_100km and points are null; counts are still given.
 */

export const SCORE_WEIGHTS = {
  'event.harsh_brake': 2,
  'event.acceleration': 1.5,
  'event.curve': 1.5,
  'event.overspeed': 1,
  'alarm.dsm.fatigue': 3,
  'alarm.dsm.phone': 3,
  'alarm.adas.collision': 4,
  'alarm.adas.lane_departure': 1,
  'alarm.bsd': 0.5,
} as const;

export type ScoredKind = keyof typeof SCORE_WEIGHTS;
export const SCORED_KINDS = Object.keys(SCORE_WEIGHTS) as ScoredKind[];

export const MIN_SCORED_KM = 5;

export interface ScoreTotals {
  distance_m: number;
  driving_ms: number;
  overspeed_ms: number;
  /** DeviceEventRaised counts by kind; kinds without a weight are ignored. */
  counts: Readonly<Record<string, number>>;
}

export interface KindScore {
  count: number;
  per_100km: number | null;
  points: number | null;
}

export interface Score {
  score: number | null;
  distance_km: number;
  driving_s: number;
  breakdown: Record<ScoredKind, KindScore>;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

export function scoreOf(t: ScoreTotals): Score {
  // Splicing late fixes subtracts and re-adds floats; never let the residue show as a negative.
  const km = Math.max(0, t.distance_m) / 1000;
  const drivingS = Math.max(0, t.driving_ms) / 1000;
  const overspeedS = Math.min(Math.max(0, t.overspeed_ms) / 1000, drivingS);
  const rated = km >= MIN_SCORED_KM;
  let penalty = 0;
  const breakdown = {} as Record<ScoredKind, KindScore>;
  for (const kind of SCORED_KINDS) {
    const count = t.counts[kind] ?? 0;
    if (!rated) {
      breakdown[kind] = { count, per_100km: null, points: null };
      continue;
    }
    const per100 = (count * 100) / km;
    const points =
      kind === 'event.overspeed' ? (drivingS > 0 ? (SCORE_WEIGHTS[kind] * 100 * overspeedS) / drivingS : 0) : SCORE_WEIGHTS[kind] * per100;
    penalty += points;
    breakdown[kind] = { count, per_100km: round(per100, 2), points: round(points, 2) };
  }
  return {
    score: rated ? round(Math.min(100, Math.max(0, 100 - penalty)), 1) : null,
    distance_km: round(km, 3),
    driving_s: Math.round(drivingS),
    breakdown,
  };
}

/** Adds totals (e.g. the days of a window). */
export function sumTotals(items: Iterable<ScoreTotals>): ScoreTotals {
  const sum = { distance_m: 0, driving_ms: 0, overspeed_ms: 0, counts: {} as Record<string, number> };
  for (const t of items) {
    sum.distance_m += t.distance_m;
    sum.driving_ms += t.driving_ms;
    sum.overspeed_ms += t.overspeed_ms;
    for (const [k, n] of Object.entries(t.counts)) sum.counts[k] = (sum.counts[k] ?? 0) + n;
  }
  return sum;
}
