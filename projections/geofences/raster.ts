/**
 * A coarse raster of a polygon over its bounding box: each cell is known to
 * be wholly inside, wholly outside, or crossed by an edge. A point in a
 * settled cell needs no edge walk at all; only points in edge cells fall back
 * to the exact test. Cells touched by an edge are found with a segment/cell
 * clip against cells grown by a hair, so a cell called inside or outside is
 * one no edge comes near, and the exact test's answer at its centre holds for
 * all its points.
 */
import type { FlatRing } from './flat-rings.js';

export const OUTSIDE = 0;
export const INSIDE = 1;
export const EDGE = 2;

export interface Raster {
  minX: number;
  minY: number;
  /** Cells per degree. */
  sx: number;
  sy: number;
  size: number;
  cells: Uint8Array;
}

export function rasterize(
  rings: readonly FlatRing[],
  minX: number,
  minY: number,
  maxX: number,
  maxY: number,
  contains: (x: number, y: number) => boolean,
): Raster {
  const vertices = rings.reduce((n, r) => n + r.length / 2, 0);
  const size = vertices > 64 ? 32 : 16;
  const w = maxX - minX || 1e-12;
  const h = maxY - minY || 1e-12;
  const sx = size / w;
  const sy = size / h;
  const grow = 1e-9 * Math.max(w, h);
  const cells = new Uint8Array(size * size).fill(255);
  const clampCell = (v: number) => Math.min(size - 1, Math.max(0, Math.floor(v)));
  for (const ring of rings) {
    for (let i = 0, j = ring.length - 2; i < ring.length; j = i, i += 2) {
      const x1 = ring[j]!;
      const y1 = ring[j + 1]!;
      const x2 = ring[i]!;
      const y2 = ring[i + 1]!;
      const cx0 = clampCell((Math.min(x1, x2) - grow - minX) * sx);
      const cx1 = clampCell((Math.max(x1, x2) + grow - minX) * sx);
      const cy0 = clampCell((Math.min(y1, y2) - grow - minY) * sy);
      const cy1 = clampCell((Math.max(y1, y2) + grow - minY) * sy);
      for (let cy = cy0; cy <= cy1; cy++) {
        for (let cx = cx0; cx <= cx1; cx++) {
          const rx0 = minX + cx / sx - grow;
          const ry0 = minY + cy / sy - grow;
          if (segmentHitsBox(x1, y1, x2, y2, rx0, ry0, minX + (cx + 1) / sx + grow, minY + (cy + 1) / sy + grow)) {
            cells[cy * size + cx] = EDGE;
          }
        }
      }
    }
  }
  for (let cy = 0; cy < size; cy++) {
    for (let cx = 0; cx < size; cx++) {
      const k = cy * size + cx;
      if (cells[k] === 255) cells[k] = contains(minX + (cx + 0.5) / sx, minY + (cy + 0.5) / sy) ? INSIDE : OUTSIDE;
    }
  }
  return { minX, minY, sx, sy, size, cells };
}

/** The class of the cell holding a point of the bounding box. */
export function cellOf(r: Raster, x: number, y: number): number {
  const last = r.size - 1;
  const cx = Math.min(last, Math.max(0, Math.floor((x - r.minX) * r.sx)));
  const cy = Math.min(last, Math.max(0, Math.floor((y - r.minY) * r.sy)));
  return r.cells[cy * r.size + cx]!;
}

/** Liang-Barsky: does the segment touch the closed box? */
export function segmentHitsBox(x1: number, y1: number, x2: number, y2: number, bx0: number, by0: number, bx1: number, by1: number): boolean {
  let t0 = 0;
  let t1 = 1;
  const dx = x2 - x1;
  const dy = y2 - y1;
  const clip = (p: number, q: number): boolean => {
    if (p === 0) return q >= 0;
    const t = q / p;
    if (p < 0) {
      if (t > t1) return false;
      if (t > t0) t0 = t;
    } else {
      if (t < t0) return false;
      if (t < t1) t1 = t;
    }
    return true;
  };
  return clip(-dx, x1 - bx0) && clip(dx, bx1 - x1) && clip(-dy, y1 - by0) && clip(dy, by1 - y1);
}
