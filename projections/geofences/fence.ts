/**
 * One geofence prepared for containment tests. The decision is Turf's
 * `booleanPointInPolygon` (a point on the boundary is inside); cheap filters
 * that can only agree with it settle most points first: a disc certainly
 * inside the polygon and one certainly around it (for circles the band
 * between them is under 0.2% of the radius), then a coarse raster
 * (raster.ts) whose cells no edge comes near. Only points in a cell an edge
 * crosses reach Turf.
 */
// Turf's own module for the one function: the whole @turf/turf bundle takes about 200 ms to load, in every thread that imports it.
import { booleanPointInPolygon } from '@turf/boolean-point-in-polygon';
import type { GeofenceCreated } from '../../core/events.js';
import { flattenPolygon, type FlatRing } from './flat-rings.js';
import { EDGE, INSIDE, cellOf, rasterize, type Raster } from './raster.js';

export type Polygon = GeofenceCreated['data']['geometry'];

export interface Fence {
  id: string;
  name: string;
  /** The GeoJSON Polygon (closed rings, [lng, lat]) Turf decides on. */
  polygon: Polygon;
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
  discs: Discs;
  raster: Raster;
}

export interface Discs {
  /** Centre (lng, lat) and the factor that makes degrees of longitude as long as degrees of latitude there. */
  cx: number;
  cy: number;
  kx: number;
  /** Squared radii, in scaled degrees, of the inner disc (-1: none) and the outer disc. */
  rIn2: number;
  rOut2: number;
}

/** The exact test, for the points no filter settles (and for building the filters). */
export function polygonContains(polygon: Polygon, lng: number, lat: number): boolean {
  return booleanPointInPolygon([lng, lat], polygon);
}

/** Prepares a geofence (GeoJSON Polygon coordinates, closed rings of [lng, lat]). */
export function compileFence(id: string, name: string, coordinates: number[][][]): Fence {
  const polygon: Polygon = { type: 'Polygon', coordinates };
  const contains = (x: number, y: number) => polygonContains(polygon, x, y);
  const rings = flattenPolygon(coordinates);
  const outer = rings[0]!;
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < outer.length; i += 2) {
    const x = outer[i]!;
    const y = outer[i + 1]!;
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  }
  return {
    id,
    name,
    polygon,
    minX,
    minY,
    maxX,
    maxY,
    discs: discsOf(rings, contains),
    raster: rasterize(rings, minX, minY, maxX, maxY, contains),
  };
}

/**
 * Around the mean of the outer vertices: the inner disc reaches the nearest
 * edge of any ring (so it holds only interior points, provided its centre is
 * inside), the outer disc the farthest vertex (a polygon lies within its
 * vertices' hull). Longitudes are scaled by cos(latitude), a linear map that
 * leaves containment unchanged and makes circles round; the radii are nudged
 * by a relative 1e-9 so rounding never settles a point the exact test would
 * not.
 */
function discsOf(rings: FlatRing[], contains: (x: number, y: number) => boolean): Discs {
  const outer = rings[0]!;
  const n = outer.length / 2;
  let cx = 0;
  let cy = 0;
  for (let i = 0; i < outer.length; i += 2) {
    cx += outer[i]!;
    cy += outer[i + 1]!;
  }
  cx /= n;
  cy /= n;
  const kx = Math.cos((cy * Math.PI) / 180);
  let rOut2 = 0;
  for (let i = 0; i < outer.length; i += 2) {
    const dx = (outer[i]! - cx) * kx;
    const dy = outer[i + 1]! - cy;
    rOut2 = Math.max(rOut2, dx * dx + dy * dy);
  }
  let rIn2 = -1;
  if (contains(cx, cy)) {
    rIn2 = Infinity;
    for (const ring of rings) {
      for (let i = 0, j = ring.length - 2; i < ring.length; j = i, i += 2) {
        rIn2 = Math.min(rIn2, segmentDistance2((ring[j]! - cx) * kx, ring[j + 1]! - cy, (ring[i]! - cx) * kx, ring[i + 1]! - cy));
      }
    }
    rIn2 *= 1 - 1e-9;
  }
  return { cx, cy, kx, rIn2, rOut2: rOut2 * (1 + 1e-9) };
}

/** Squared distance from the origin to the segment a-b. */
function segmentDistance2(ax: number, ay: number, bx: number, by: number): number {
  const ex = bx - ax;
  const ey = by - ay;
  const len2 = ex * ex + ey * ey;
  const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, -(ax * ex + ay * ey) / len2));
  const px = ax + t * ex;
  const py = ay + t * ey;
  return px * px + py * py;
}

export function fenceContains(f: Fence, lat: number, lng: number): boolean {
  if (lng < f.minX || lng > f.maxX || lat < f.minY || lat > f.maxY) return false;
  const d = f.discs;
  const dx = (lng - d.cx) * d.kx;
  const dy = lat - d.cy;
  const d2 = dx * dx + dy * dy;
  if (d2 <= d.rIn2) return true;
  if (d2 > d.rOut2) return false;
  const cell = cellOf(f.raster, lng, lat);
  return cell === EDGE ? polygonContains(f.polygon, lng, lat) : cell === INSIDE;
}
