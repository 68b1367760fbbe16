/**
 * Point-in-polygon on flat coordinate arrays, planar in (lng, lat) like
 * Turf's booleanPointInPolygon, without its per-call GeoJSON allocations:
 * the geofence detector runs it for every fix, the bench a million times.
 * Results equal Turf's except for points exactly on an edge (measure zero;
 * the test compares both on random points).
 */

/** A ring as [x0, y0, x1, y1, ...] (lng, lat), without the closing repeat of the first vertex. */
export type FlatRing = Float64Array;

/** Even-odd crossing test of one ring. */
export function inRing(ring: FlatRing, x: number, y: number): boolean {
  let inside = false;
  const n = ring.length;
  let xj = ring[n - 2]!;
  let yj = ring[n - 1]!;
  for (let i = 0; i < n; i += 2) {
    const xi = ring[i]!;
    const yi = ring[i + 1]!;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
    xj = xi;
    yj = yi;
  }
  return inside;
}

/** GeoJSON semantics: inside the outer ring and inside none of the holes. */
export function inPolygon(rings: readonly FlatRing[], x: number, y: number): boolean {
  if (!inRing(rings[0]!, x, y)) return false;
  for (let r = 1; r < rings.length; r++) if (inRing(rings[r]!, x, y)) return false;
  return true;
}

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

/**
 * A ring cut into horizontal slabs, each listing the edges whose latitude
 * range overlaps it: the crossing test of a point only looks at the edges of
 * its slab (a handful, even for a 1000-vertex ring). Same answer as `inRing`:
 * every edge a horizontal ray at y can cross is in y's slab.
 */
export interface SlabRing {
  ring: FlatRing;
  minY: number;
  /** Slabs per degree of latitude. */
  scale: number;
  slabs: number;
  /** Edges of slab s: edges[starts[s] .. starts[s+1]), each the index of its end vertex. */
  starts: Uint32Array;
  edges: Uint32Array;
}

/** About this many edges per slab on average. */
const EDGES_PER_SLAB = 4;

export function slabRing(ring: FlatRing): SlabRing {
  const n = ring.length / 2;
  let minY = Infinity;
  let maxY = -Infinity;
  for (let i = 1; i < ring.length; i += 2) {
    minY = Math.min(minY, ring[i]!);
    maxY = Math.max(maxY, ring[i]!);
  }
  const slabs = Math.max(1, Math.min(256, Math.ceil(n / EDGES_PER_SLAB)));
  const scale = maxY > minY ? slabs / (maxY - minY) : 0;
  const slabOf = (y: number) => Math.min(slabs - 1, Math.max(0, Math.floor((y - minY) * scale)));
  const lists: number[][] = Array.from({ length: slabs }, () => []);
  for (let i = 0; i < n; i++) {
    const j = (i + n - 1) % n;
    const a = slabOf(ring[2 * j + 1]!);
    const b = slabOf(ring[2 * i + 1]!);
    for (let s = Math.min(a, b); s <= Math.max(a, b); s++) lists[s]!.push(i);
  }
  const starts = new Uint32Array(slabs + 1);
  for (let s = 0; s < slabs; s++) starts[s + 1] = starts[s]! + lists[s]!.length;
  return { ring, minY, scale, slabs, starts, edges: Uint32Array.from(lists.flat()) };
}

export function inSlabRing(r: SlabRing, x: number, y: number): boolean {
  const s = Math.min(r.slabs - 1, Math.max(0, Math.floor((y - r.minY) * r.scale)));
  const ring = r.ring;
  const n2 = ring.length;
  let inside = false;
  for (let k = r.starts[s]!, end = r.starts[s + 1]!; k < end; k++) {
    const i = 2 * r.edges[k]!;
    const j = i === 0 ? n2 - 2 : i - 2;
    const xi = ring[i]!;
    const yi = ring[i + 1]!;
    const xj = ring[j]!;
    const yj = ring[j + 1]!;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** `inPolygon` over slab rings. */
export function inSlabPolygon(rings: readonly SlabRing[], x: number, y: number): boolean {
  if (!inSlabRing(rings[0]!, x, y)) return false;
  for (let r = 1; r < rings.length; r++) if (inSlabRing(rings[r]!, x, y)) return false;
  return true;
}
