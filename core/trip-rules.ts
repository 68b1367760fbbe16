/**
 * The rules that cut a device's fixes into trips, stops and idling
 * (docs/trips.md), per customer. Defaults hold until a customer sets its own
 * (`TripRulesSet`); each bound keeps a setting from making the read model
 * meaningless (a zero stop would split every trip at each red light).
 */

export interface TripRules {
  /** `auto`: ignition where the unit reports it, else motion; `motion`: speed alone, ignition ignored. */
  trip_source: 'auto' | 'motion';
  /** Slower than this a vehicle stands (GPS drift while parked is not driving). */
  moving_speed_kmh: number;
  /** Shorter trips are dropped: their time belongs to the stop around them. */
  min_trip_distance_m: number;
  min_trip_duration_s: number;
  /** Shorter pauses do not end a trip (a red light, a queue, a short ignition cycle). */
  min_stop_duration_s: number;
  /** Engine on and standing at least this long is an idle. */
  min_idle_duration_s: number;
}

export const DEFAULT_TRIP_RULES: Readonly<TripRules> = Object.freeze({
  trip_source: 'auto',
  moving_speed_kmh: 5,
  min_trip_distance_m: 500,
  min_trip_duration_s: 60,
  min_stop_duration_s: 180,
  min_idle_duration_s: 120,
});

/** Inclusive bounds of each numeric rule, for the API's schema and the command's check. */
export const TRIP_RULE_BOUNDS = {
  moving_speed_kmh: { minimum: 1, maximum: 30 },
  min_trip_distance_m: { minimum: 0, maximum: 100_000 },
  min_trip_duration_s: { minimum: 0, maximum: 86_400 },
  min_stop_duration_s: { minimum: 30, maximum: 86_400 },
  min_idle_duration_s: { minimum: 30, maximum: 86_400 },
} as const satisfies Record<Exclude<keyof TripRules, 'trip_source'>, { minimum: number; maximum: number }>;

/** The first rule out of bounds, as [field, message], or null when all hold. */
export function tripRulesProblem(rules: TripRules): [keyof TripRules, string] | null {
  if (rules.trip_source !== 'auto' && rules.trip_source !== 'motion') return ['trip_source', 'must be auto or motion'];
  for (const [field, b] of Object.entries(TRIP_RULE_BOUNDS) as Array<[keyof typeof TRIP_RULE_BOUNDS, { minimum: number; maximum: number }]>) {
    const v = rules[field];
    if (!Number.isFinite(v) || v < b.minimum || v > b.maximum) return [field, `must be between ${b.minimum} and ${b.maximum}`];
  }
  return null;
}
