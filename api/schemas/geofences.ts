import { Type, type Static } from '@sinclair/typebox';
import type { GeofenceRow } from '../../projections/geofences/index.js';
import { Limit, Nullable, Pagination, Timestamp, iso } from './common.js';

const Name = Type.String({ minLength: 1, maxLength: 128, pattern: '\\S' });

/** A stay shorter than a minute is a pass-through; a week is the longest a threshold means anything. */
const DwellS = Nullable(
  Type.Integer({
    minimum: 60,
    maximum: 604_800,
    description: 'Raise `geofence.dwell` once a device has stayed inside this many seconds without leaving (once per visit); null: never',
  }),
);

export const LatLng = Type.Object(
  { lat: Type.Number({ minimum: -90, maximum: 90 }), lng: Type.Number({ minimum: -180, maximum: 180 }) },
  { additionalProperties: false },
);

export const PolygonGeometry = Type.Object({
  type: Type.Literal('Polygon'),
  coordinates: Type.Array(Type.Array(Type.Array(Type.Number())), { description: 'linear rings of [lng, lat] positions' }),
});

/**
 * Exactly one of `geometry` or `center` + `radius_m`. The GeoJSON itself is
 * checked by api/geofence-input.ts, which can name each offending position.
 */
export const CreateGeofenceBody = Type.Object(
  {
    name: Name,
    geometry: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'GeoJSON Polygon, or a Feature whose geometry is one: positions [lng, lat], closed rings, at most 1000 vertices, not self-intersecting',
        },
      ),
    ),
    center: Type.Optional(LatLng),
    radius_m: Type.Optional(Type.Number({ minimum: 10, maximum: 100_000, description: 'circle radius in metres' })),
    dwell_s: Type.Optional(DwellS),
  },
  { additionalProperties: false },
);
export type CreateGeofenceBody = Static<typeof CreateGeofenceBody>;

/** Merge-patch: a field left out stays, null clears. */
export const UpdateGeofenceBody = Type.Object({ dwell_s: Type.Optional(DwellS) }, { additionalProperties: false });

export const Geofence = Type.Object({
  id: Type.String(),
  name: Type.String(),
  shape: Type.Union([Type.Literal('polygon'), Type.Literal('circle')]),
  geometry: PolygonGeometry,
  center: Nullable(Type.Object({ lat: Type.Number(), lng: Type.Number() })),
  radius_m: Nullable(Type.Number()),
  dwell_s: DwellS,
  created_at: Timestamp,
});

export const GeofenceParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const ListGeofencesQuery = Type.Object(
  { limit: Limit(200), cursor: Type.Optional(Type.String({ maxLength: 512 })) },
  { additionalProperties: false },
);
export type ListGeofencesQuery = Static<typeof ListGeofencesQuery>;

export const GeofenceList = Type.Object({ data: Type.Array(Geofence), pagination: Pagination });

export function geofenceBody(g: GeofenceRow): Static<typeof Geofence> {
  return {
    id: g.geofence_id,
    name: g.name,
    shape: g.shape,
    geometry: JSON.parse(g.geometry) as Static<typeof PolygonGeometry>,
    center: g.center_lat === null || g.center_lng === null ? null : { lat: g.center_lat, lng: g.center_lng },
    radius_m: g.radius_m,
    dwell_s: g.dwell_s,
    created_at: iso(g.created_at),
  };
}
