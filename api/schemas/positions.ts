import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Pagination, Timestamp } from './common.js';

export const LatestPosition = Type.Object({
  device_id: Type.String(),
  device_name: Nullable(Type.String()),
  lat: Type.Number(),
  lng: Type.Number(),
  speed_kmh: Nullable(Type.Number()),
  heading_deg: Nullable(Type.Number()),
  altitude_m: Nullable(Type.Number()),
  satellites: Nullable(Type.Integer()),
  timestamp: Timestamp,
  received_at: Timestamp,
  ignition: Nullable(Type.Boolean()),
});

export const LatestPositionsQuery = Type.Object(
  {
    device_id: Type.Optional(Type.String({ maxLength: 10_000, description: 'comma-separated device ids' })),
    group_id: Type.Optional(Type.String({ maxLength: 64 })),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);
export type LatestPositionsQuery = Static<typeof LatestPositionsQuery>;

export const LatestPositionList = Type.Object({ data: Type.Array(LatestPosition), pagination: Pagination });

export const HistoryQuery = Type.Object(
  {
    device_id: Type.String({ minLength: 1, maxLength: 64 }),
    from: Type.String({ format: 'date-time', description: 'RFC 3339 with Z or an offset, inclusive' }),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339 with Z or an offset, exclusive; defaults to now' })),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
    order: Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc' }),
  },
  { additionalProperties: false },
);
export type HistoryQuery = Static<typeof HistoryQuery>;

export const HistoryPosition = Type.Object({
  device_id: Type.String(),
  lat: Type.Number(),
  lng: Type.Number(),
  speed_kmh: Nullable(Type.Number()),
  heading_deg: Nullable(Type.Number()),
  altitude_m: Nullable(Type.Number()),
  satellites: Nullable(Type.Integer()),
  valid: Type.Boolean(),
  ignition: Nullable(Type.Boolean()),
  odometer_km: Nullable(Type.Number()),
  timestamp: Timestamp,
  received_at: Timestamp,
});

export const HistoryList = Type.Object({ data: Type.Array(HistoryPosition), pagination: Pagination });
