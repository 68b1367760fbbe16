import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { SCORED_KINDS, type Score } from '../../projections/driver-scores/score.js';
import type { CurrentVehicle, DriverRow } from '../queries/drivers.js';
import { Limit, Nullable, Pagination, Timestamp, iso } from './common.js';

export const CreateDriverBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128, pattern: '\\S' }),
    external_id: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 128, description: "the customer's own id for the driver; unique per customer" })),
    ),
  },
  { additionalProperties: false },
);
export type CreateDriverBody = Static<typeof CreateDriverBody>;

export const Driver = Type.Object({
  id: Type.String(),
  name: Type.String(),
  external_id: Nullable(Type.String()),
  score: Nullable(Type.Number({ description: 'score over the 7 UTC days ending with the newest day of driving data; null under 5 km' })),
  current_vehicle: Nullable(Type.Object({ device_id: Type.String(), device_name: Nullable(Type.String()) })),
  created_at: Timestamp,
});

export const DriverParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const ListDriversQuery = Type.Object(
  { limit: Limit(200), cursor: Type.Optional(Type.String({ maxLength: 512 })) },
  { additionalProperties: false },
);
export type ListDriversQuery = Static<typeof ListDriversQuery>;

export const DriverList = Type.Object({ data: Type.Array(Driver), pagination: Pagination });

export const ScoreQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date', description: 'first UTC day, YYYY-MM-DD (inclusive); default 7 days before to' })),
    to: Type.Optional(Type.String({ format: 'date', description: 'UTC day after the last one, YYYY-MM-DD (exclusive); default tomorrow' })),
  },
  { additionalProperties: false },
);
export type ScoreQuery = Static<typeof ScoreQuery>;

const KindScore = Type.Object({ count: Type.Integer(), per_100km: Nullable(Type.Number()), points: Nullable(Type.Number()) });

export const DailyScore = Type.Object({
  date: Type.String({ format: 'date' }),
  score: Nullable(Type.Number()),
  distance_km: Type.Number(),
  driving_s: Type.Integer(),
  breakdown: Type.Object(Object.fromEntries(SCORED_KINDS.map((k) => [k, KindScore])) as Record<string, TSchema>),
});

export const DriverScoreHistory = Type.Object({
  driver_id: Type.String(),
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  data: Type.Array(DailyScore),
});

export function driverBody(d: DriverRow, score: Score | null, vehicle: CurrentVehicle | null): Static<typeof Driver> {
  return {
    id: d.driver_id,
    name: d.name,
    external_id: d.external_id,
    score: score?.score ?? null,
    current_vehicle: vehicle,
    created_at: iso(d.created_at),
  };
}
