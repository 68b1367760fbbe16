/** Polygon rings as flat coordinate arrays, for the prefilters (discs, raster) built once per geofence. */

/** A ring as [x0, y0, x1, y1, ...] (lng, lat), without the closing repeat of the first vertex. */
export type FlatRing = Float64Array;

/** GeoJSON Polygon coordinates -> flat rings, dropping each ring's closing position. */
export function flattenPolygon(coordinates: readonly (readonly (readonly number[])[])[]): FlatRing[] {
  return coordinates.map((ring) => {
    const closed = ring.length > 1 && ring[0]![0] === ring[ring.length - 1]![0] && ring[0]![1] === ring[ring.length - 1]![1];
    const count = closed ? ring.length - 1 : ring.length;
    const flat = new Float64Array(count * 2);
    for (let i = 0; i < count; i++) {
      flat[2 * i] = ring[i]![0]!;
      flat[2 * i + 1] = ring[i]![1]!;
    }
    return flat;
  });
}
