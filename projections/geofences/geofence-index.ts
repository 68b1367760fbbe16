/**
 * An immutable spatial index over one customer's geofences: a Flatbush
 * R-tree over bounding boxes narrows a point to the few geofences whose box
 * holds it, then each is settled as in fence.ts (discs and raster, Turf for
 * points near an edge). Pure and in memory, so the benchmark drives it
 * directly.
 *
 * With thousands of geofences the cost is memory, not arithmetic: each
 * candidate used to cost a few cache misses on scattered objects. So the
 * per-geofence numbers the filter reads (discs, raster frame, cells) live in
 * flat typed arrays, laid out along a Z-order curve of the boxes, so that the
 * candidates of one point sit close together.
 */
import Flatbush from 'flatbush';
import { polygonContains, type Fence } from './fence.js';
import { EDGE, INSIDE } from './raster.js';

export { compileFence, fenceContains, type Fence } from './fence.js';

/** Numbers per geofence in `frame`: cx, cy, kx, rIn2, rOut2, raster minX, minY, sx, sy. */
const STRIDE = 9;

export class GeofenceIndex {
  /** The geofences in slot order (Z-order of their boxes); the tree's item i is slot i. */
  readonly fences: readonly Fence[];
  private readonly tree: Flatbush | null;
  private readonly frame: Float64Array;
  private readonly cellStart: Uint32Array;
  private readonly cellSize: Uint8Array;
  private readonly cells: Uint8Array;
  // The query point, kept in fields so the search filter is one function allocated once.
  private qx = 0;
  private qy = 0;
  private readonly exact = (slot: number): boolean => this.containsAt(slot, this.qx, this.qy);

  constructor(fences: readonly Fence[]) {
    this.fences = zOrder(fences);
    const n = this.fences.length;
    this.frame = new Float64Array(n * STRIDE);
    this.cellStart = new Uint32Array(n);
    this.cellSize = new Uint8Array(n);
    this.cells = new Uint8Array(this.fences.reduce((sum, f) => sum + f.raster.cells.length, 0));
    let offset = 0;
    this.fences.forEach((f, slot) => {
      const d = f.discs;
      const r = f.raster;
      this.frame.set([d.cx, d.cy, d.kx, d.rIn2, d.rOut2, r.minX, r.minY, r.sx, r.sy], slot * STRIDE);
      this.cellStart[slot] = offset;
      this.cellSize[slot] = r.size;
      this.cells.set(r.cells, offset);
      offset += r.cells.length;
    });
    if (n === 0) {
      this.tree = null;
      return;
    }
    // Small nodes: queries are points, and fewer boxes per node beat a shallower tree here (measured).
    const tree = new Flatbush(n, 4);
    for (const f of this.fences) tree.add(f.minX, f.minY, f.maxX, f.maxY);
    tree.finish();
    this.tree = tree;
  }

  get size(): number {
    return this.fences.length;
  }

  /** Ids of the geofences that contain the point. */
  containing(lat: number, lng: number): string[] {
    if (!this.tree) return [];
    this.qx = lng;
    this.qy = lat;
    const hits = this.tree.search(lng, lat, lng, lat, this.exact);
    const ids = new Array<string>(hits.length);
    for (let i = 0; i < hits.length; i++) ids[i] = this.fences[hits[i]!]!.id;
    return ids;
  }

  /** fenceContains for a point already inside the slot's box, reading the packed arrays. */
  private containsAt(slot: number, x: number, y: number): boolean {
    const f = this.frame;
    const o = slot * STRIDE;
    const dx = (x - f[o]!) * f[o + 2]!;
    const dy = y - f[o + 1]!;
    const d2 = dx * dx + dy * dy;
    if (d2 <= f[o + 3]!) return true;
    if (d2 > f[o + 4]!) return false;
    const size = this.cellSize[slot]!;
    const cx = Math.min(size - 1, Math.max(0, Math.floor((x - f[o + 5]!) * f[o + 7]!)));
    const cy = Math.min(size - 1, Math.max(0, Math.floor((y - f[o + 6]!) * f[o + 8]!)));
    const cell = this.cells[this.cellStart[slot]! + cy * size + cx]!;
    return cell === EDGE ? polygonContains(this.fences[slot]!.polygon, x, y) : cell === INSIDE;
  }
}

/** The geofences sorted along a Z-order (Morton) curve of their box centres. */
function zOrder(fences: readonly Fence[]): Fence[] {
  if (fences.length < 2) return [...fences];
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const f of fences) {
    minX = Math.min(minX, f.minX);
    minY = Math.min(minY, f.minY);
    maxX = Math.max(maxX, f.maxX);
    maxY = Math.max(maxY, f.maxY);
  }
  const kx = 65535 / (maxX - minX || 1);
  const ky = 65535 / (maxY - minY || 1);
  const keyed = fences.map((f) => ({
    f,
    key: morton(Math.round(((f.minX + f.maxX) / 2 - minX) * kx), Math.round(((f.minY + f.maxY) / 2 - minY) * ky)),
  }));
  keyed.sort((a, b) => a.key - b.key);
  return keyed.map((k) => k.f);
}

/** Interleaves the bits of two 16-bit integers. */
function morton(x: number, y: number): number {
  return (spread(x) | (spread(y) << 1)) >>> 0;
}

function spread(v: number): number {
  let x = v & 0xffff;
  x = (x | (x << 8)) & 0x00ff00ff;
  x = (x | (x << 4)) & 0x0f0f0f0f;
  x = (x | (x << 2)) & 0x33333333;
  x = (x | (x << 1)) & 0x55555555;
  return x;
}
