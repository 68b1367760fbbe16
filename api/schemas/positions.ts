/**
 * A position, one shape composed where it is shown: on a device, in the
 * latest list, in the history and in the live stream. The fix fields and
 * their mapping from a stored fix (`fixBody`) exist once.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { LatestPositionRow } from '../../projections/index.js';
import { Nullable, Pagination, Timestamp, iso } from './common.js';
import { SensorAttributes } from '../sensor-attributes.js';

const fixFields = {
  lat: Type.Number(),
  lng: Type.Number(),
  speed_kmh: Nullable(Type.Number()),
  heading_deg: Nullable(Type.Number()),
  altitude_m: Nullable(Type.Number()),
  satellites: Nullable(Type.Integer()),
  timestamp: Timestamp,
  received_at: Timestamp,
  ignition: Nullable(Type.Boolean()),
};

/** The fix alone: a device's `latest_position`. */
export const DevicePosition = Type.Object(fixFields);
export const LatestPosition = Type.Object({ device_id: Type.String(), device_name: Nullable(Type.String()), ...fixFields, attributes: SensorAttributes });
export const HistoryPosition = Type.Object({
  device_id: Type.String(),
  ...fixFields,
  valid: Type.Boolean(),
  odometer_km: Nullable(Type.Number()),
  attributes: SensorAttributes,
});
export const StreamPosition = Type.Object({
  device_id: Type.String(),
  device_name: Nullable(Type.String()),
  ...fixFields,
  valid: Type.Boolean(),
  attributes: SensorAttributes,
});

/** A stored fix: read-model rows keep ignition as 0/1, events as a boolean. */
export type StoredFix = Omit<LatestPositionRow, 'device_id' | 'customer_id' | 'ignition' | 'odometer_m' | 'attributes'> & { ignition: number | boolean | null };

export function fixBody(p: StoredFix): Static<typeof DevicePosition> {
  return {
    lat: p.lat,
    lng: p.lng,
    speed_kmh: p.speed_kmh,
    heading_deg: p.heading_deg,
    altitude_m: p.altitude_m,
    satellites: p.satellites,
    timestamp: iso(p.fix_time),
    received_at: iso(p.received_at),
    ignition: p.ignition === null ? null : p.ignition === true || p.ignition === 1,
  };
}

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
    format: Type.Union([Type.Literal('json'), Type.Literal('csv'), Type.Literal('gpx'), Type.Literal('kml')], {
      default: 'json',
      description: 'csv, gpx or kml: every fix of the window streamed as one file, oldest first (limit, cursor and order do not apply)',
    }),
  },
  { additionalProperties: false },
);
export type HistoryQuery = Static<typeof HistoryQuery>;


export const HistoryList = Type.Object({ data: Type.Array(HistoryPosition), pagination: Pagination });
