/**
 * Trips, stops, idling, accumulators and trip rules: their shapes, queries
 * and the mapping from read-model rows. Times are RFC 3339, distances km,
 * durations s (docs/trips.md).
 */
import { Type, type Static } from '@sinclair/typebox';
import { DEFAULT_TRIP_RULES, TRIP_RULE_BOUNDS } from '../../core/trip-rules.js';
import type { AccumulatorsRecord, SpanRecord, TripRecord } from '../queries/trips.js';
import { Limit, Nullable, Pagination, Timestamp, iso } from './common.js';

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;

const Geofences = Type.Array(Type.String(), {
  description: "Ids of the customer's geofences containing this position, as they were when the fix was applied (a geofence deleted since stays listed)",
});

const TripEnd = Type.Object({
  time: Timestamp,
  lat: Type.Number(),
  lng: Type.Number(),
  odometer_km: Type.Number({ description: 'The device accumulator (GET /v1/devices/{id}/accumulators) at this fix' }),
  engine_hours: Type.Number(),
  geofences: Geofences,
});

export const Trip = Type.Object({
  device_id: Type.String(),
  driver_id: Nullable(Type.String({ description: 'The driver of the vehicle when the trip started' })),
  start: TripEnd,
  end: TripEnd,
  distance_km: Type.Number({ description: 'Along the fixes, GPS jumps and standing drift left out' }),
  duration_s: Type.Integer(),
  max_speed_kmh: Type.Number(),
  avg_speed_kmh: Type.Number({ description: 'distance_km over duration_s, idling included' }),
  idle_s: Type.Integer({ description: 'Idling (engine on, standing) inside the trip' }),
});

export const Span = Type.Object({
  device_id: Type.String(),
  start: Timestamp,
  end: Nullable(Timestamp),
  duration_s: Type.Integer({ description: 'Up to the end, or to the device\'s latest fix while it lasts' }),
  lat: Type.Number(),
  lng: Type.Number(),
  geofences: Geofences,
});

export const TripList = Type.Object({ data: Type.Array(Trip), pagination: Pagination });
export const SpanList = Type.Object({ data: Type.Array(Span), pagination: Pagination });

const commaIds = (what: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 2_000, description: `comma-separated ${what} ids` }));

const windowAndPage = {
  device_id: commaIds('device'),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339 with Z or an offset; on the start time, inclusive' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339 with Z or an offset; on the start time, exclusive' })),
  limit: Limit(1000),
  cursor: Type.Optional(Type.String({ maxLength: 512 })),
  format: Type.Union([Type.Literal('json'), Type.Literal('csv')], {
    default: 'json',
    description: 'csv: every row of the window streamed as one file (limit and cursor do not apply)',
  }),
};

export const TripsQuery = Type.Object({ ...windowAndPage, driver_id: commaIds('driver') }, { additionalProperties: false });
export const SpansQuery = Type.Object(windowAndPage, { additionalProperties: false });
export type TripsQuery = Static<typeof TripsQuery>;

function tripEnd(t: number, lat: number, lng: number, odometerM: number, engineS: number, geofences: string): Static<typeof TripEnd> {
  return { time: iso(t), lat, lng, odometer_km: round(odometerM / 1000, 3), engine_hours: round(engineS / 3600, 3), geofences: JSON.parse(geofences) as string[] };
}

export function tripItem(r: TripRecord): Static<typeof Trip> {
  const durationS = Math.round((r.end_t - r.start_t) / 1000);
  return {
    device_id: r.device_id,
    driver_id: r.driver_id,
    start: tripEnd(r.start_t, r.start_lat, r.start_lng, r.start_odometer_m, r.start_engine_s, r.start_geofences),
    end: tripEnd(r.end_t, r.end_lat, r.end_lng, r.end_odometer_m, r.end_engine_s, r.end_geofences),
    distance_km: round(r.distance_m / 1000, 3),
    duration_s: durationS,
    max_speed_kmh: r.max_speed_kmh,
    avg_speed_kmh: durationS > 0 ? round((r.distance_m / durationS) * 3.6, 1) : 0,
    idle_s: Math.round(r.idle_ms / 1000),
  };
}

/** `latestFixT`: the device's newest fix, which an open span lasts to. */
export function spanItem(r: SpanRecord, latestFixT: number | null): Static<typeof Span> {
  const until = r.end_t ?? Math.max(latestFixT ?? r.start_t, r.start_t);
  return {
    device_id: r.device_id,
    start: iso(r.start_t),
    end: iso(r.end_t),
    duration_s: Math.round((until - r.start_t) / 1000),
    lat: r.lat,
    lng: r.lng,
    geofences: JSON.parse(r.geofences) as string[],
  };
}

export const Accumulators = Type.Object({
  device_id: Type.String(),
  odometer_km: Type.Number(),
  engine_hours: Type.Number(),
});

export const AccumulatorsBody = Type.Object(
  {
    odometer_km: Type.Optional(Type.Number({ minimum: 0, maximum: 10_000_000, description: 'What the dashboard shows' })),
    engine_hours: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export function accumulatorsItem(deviceId: string, a: AccumulatorsRecord): Static<typeof Accumulators> {
  return { device_id: deviceId, odometer_km: round(a.odometer_m / 1000, 3), engine_hours: round(a.engine_ms / 3_600_000, 3) };
}

const ruleNumber = (field: keyof typeof TRIP_RULE_BOUNDS, description: string) =>
  Type.Number({ ...TRIP_RULE_BOUNDS[field], default: DEFAULT_TRIP_RULES[field], description });

export const TripRulesBody = Type.Object(
  {
    trip_source: Type.Union([Type.Literal('auto'), Type.Literal('motion')], {
      default: DEFAULT_TRIP_RULES.trip_source,
      description: 'auto: ignition where the unit reports it, else motion; motion: speed alone',
    }),
    moving_speed_kmh: ruleNumber('moving_speed_kmh', 'Slower than this the vehicle stands'),
    min_trip_distance_m: ruleNumber('min_trip_distance_m', 'Shorter trips are dropped into the stop around them'),
    min_trip_duration_s: ruleNumber('min_trip_duration_s', 'Shorter trips are dropped into the stop around them'),
    min_stop_duration_s: ruleNumber('min_stop_duration_s', 'Shorter pauses do not end a trip'),
    min_idle_duration_s: ruleNumber('min_idle_duration_s', 'Engine on and standing at least this long is an idle'),
  },
  { additionalProperties: false },
);
export const TripRules = TripRulesBody;
