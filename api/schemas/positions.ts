import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Timestamp } from './common.js';

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
  },
  { additionalProperties: false },
);
export type LatestPositionsQuery = Static<typeof LatestPositionsQuery>;

export const LatestPositionList = Type.Object({ data: Type.Array(LatestPosition) });
