/**
 * Turns a create-geofence body into the shape stored in GeofenceCreated, or
 * into every problem found, each with a pointer: which position is off the
 * globe, which ring is open, where edges cross.
 */
// Turf's own modules (see projections/geofences/fence.ts: the whole bundle is slow to load).
import { area } from '@turf/area';
import { booleanPointInPolygon } from '@turf/boolean-point-in-polygon';
import { circle } from '@turf/circle';
import { kinks } from '@turf/kinks';
import type { GeofenceShape } from '../core/commands/geofences.js';
import type { FieldError } from './problem.js';
import type { CreateGeofenceBody } from './schemas/geofences.js';

export const MAX_VERTICES = 1000;
/** Vertices of the polygon that stands in for a circle (edge error under 0.13% of the radius). */
export const CIRCLE_STEPS = 64;
/** Reported problems at most; a broken 1000-vertex ring should not produce a megabyte of errors. */
const MAX_ERRORS = 20;

type Polygon = GeofenceShape['geometry'];

export function geofenceShape(body: CreateGeofenceBody): { shape: GeofenceShape } | { errors: FieldError[] } {
  const hasGeometry = body.geometry !== undefined;
  const hasCircle = body.center !== undefined || body.radius_m !== undefined;
  if (hasGeometry && hasCircle) {
    return {
      errors: [
        { pointer: '/body/geometry', message: 'give either geometry or center with radius_m, not both' },
        { pointer: body.center !== undefined ? '/body/center' : '/body/radius_m', message: 'cannot be combined with geometry' },
      ],
    };
  }
  if (!hasGeometry && !hasCircle) {
    return { errors: [{ pointer: '/body/geometry', message: 'is required unless center and radius_m describe a circle' }] };
  }
  if (hasCircle) {
    const errors: FieldError[] = [];
    if (body.center === undefined) errors.push({ pointer: '/body/center', message: 'is required with radius_m' });
    if (body.radius_m === undefined) errors.push({ pointer: '/body/radius_m', message: 'is required with center' });
    if (errors.length > 0) return { errors };
    const center = { lat: body.center!.lat, lng: body.center!.lng };
    return { shape: { shape: 'circle', geometry: circlePolygon(center, body.radius_m!), center, radius_m: body.radius_m! } };
  }
  const polygon = parsePolygon(body.geometry);
  return 'errors' in polygon ? polygon : { shape: { shape: 'polygon', geometry: polygon.polygon, center: null, radius_m: null } };
}

/** The polygon approximating a circle, used for containment; coordinates rounded to ~1 cm. */
export function circlePolygon(center: { lat: number; lng: number }, radiusM: number): Polygon {
  const ring = circle([center.lng, center.lat], radiusM / 1000, { steps: CIRCLE_STEPS, units: 'kilometers' }).geometry.coordinates[0]!;
  const rounded = ring.map(([lng, lat]) => [round7(lng!), round7(lat!)]);
  rounded[rounded.length - 1] = [...rounded[0]!]; // rounding must not open the ring
  return { type: 'Polygon', coordinates: [rounded] };
}

const round7 = (x: number) => Math.round(x * 1e7) / 1e7;

function parsePolygon(input: unknown): { polygon: Polygon } | { errors: FieldError[] } {
  let base = '/body/geometry';
  let g = input as Record<string, unknown>;
  if (g.type === 'Feature') {
    base += '/geometry';
    if (typeof g.geometry !== 'object' || g.geometry === null || Array.isArray(g.geometry)) {
      return { errors: [{ pointer: base, message: 'a Feature must carry a Polygon geometry' }] };
    }
    g = g.geometry as Record<string, unknown>;
  }
  if (g.type !== 'Polygon') {
    return {
      errors: [{ pointer: `${base}/type`, message: `must be "Polygon" or "Feature" with a Polygon geometry (got ${JSON.stringify(g.type ?? null)})` }],
    };
  }
  const coords = g.coordinates;
  if (!Array.isArray(coords) || coords.length === 0) {
    return { errors: [{ pointer: `${base}/coordinates`, message: 'must be a non-empty array of linear rings' }] };
  }
  const errors: FieldError[] = [];
  const rings: number[][][] = [];
  coords.forEach((ring: unknown, i) => {
    const checked = parseRing(ring, `${base}/coordinates/${i}`, errors);
    if (checked) rings.push(checked);
  });
  if (errors.length > 0) return { errors: errors.slice(0, MAX_ERRORS) };
  const vertices = rings.reduce((n, r) => n + r.length - 1, 0);
  if (vertices > MAX_VERTICES) {
    return { errors: [{ pointer: `${base}/coordinates`, message: `has ${vertices} vertices; at most ${MAX_VERTICES} are accepted` }] };
  }
  const polygon: Polygon = { type: 'Polygon', coordinates: rings };
  const crossings = kinks(polygon).features.slice(0, 3);
  if (crossings.length > 0) {
    const at = crossings.map((p) => `[${p.geometry.coordinates.map((c) => round7(c)).join(', ')}]`).join(', ');
    return { errors: [{ pointer: `${base}/coordinates`, message: `edges cross each other (self-intersection at ${at})` }] };
  }
  rings.forEach((ring, i) => {
    if (area({ type: 'Polygon', coordinates: [ring] }) <= 0) {
      errors.push({ pointer: `${base}/coordinates/${i}`, message: 'encloses no area' });
    }
  });
  for (let i = 1; i < rings.length; i++) {
    // No edges cross, so a hole is inside the outer ring exactly when its first vertex is.
    const [x, y] = rings[i]![0]!;
    if (!booleanPointInPolygon([x!, y!], { type: 'Polygon', coordinates: [rings[0]!] })) errors.push({ pointer: `${base}/coordinates/${i}`, message: 'a hole must lie inside the outer ring' });
  }
  return errors.length > 0 ? { errors } : { polygon };
}

/** Checks one linear ring; returns it as [lng, lat] pairs (altitudes dropped) or null after recording its problems. */
function parseRing(ring: unknown, pointer: string, errors: FieldError[]): number[][] | null {
  if (!Array.isArray(ring)) {
    errors.push({ pointer, message: 'must be an array of [lng, lat] positions' });
    return null;
  }
  if (ring.length < 4) {
    errors.push({ pointer, message: 'a linear ring needs at least 4 positions: 3 corners and the first one repeated' });
    return null;
  }
  const out: number[][] = [];
  let ok = true;
  ring.forEach((p: unknown, j) => {
    const at = `${pointer}/${j}`;
    if (!Array.isArray(p) || p.length < 2 || p.length > 3 || !p.every((c) => typeof c === 'number' && Number.isFinite(c))) {
      errors.push({ pointer: at, message: 'must be a position [lng, lat] of finite numbers' });
      ok = false;
      return;
    }
    const [lng, lat] = p as number[];
    if (lng! < -180 || lng! > 180) {
      errors.push({ pointer: `${at}/0`, message: 'longitude must be within -180..180 (positions are [lng, lat])' });
      ok = false;
    }
    if (lat! < -90 || lat! > 90) {
      errors.push({ pointer: `${at}/1`, message: 'latitude must be within -90..90 (positions are [lng, lat])' });
      ok = false;
    }
    out.push([lng!, lat!]);
  });
  if (!ok) return null;
  const first = out[0]!;
  const last = out[out.length - 1]!;
  if (first[0] !== last[0] || first[1] !== last[1]) {
    errors.push({ pointer, message: 'is not closed: the last position must repeat the first' });
    return null;
  }
  if (new Set(out.slice(0, -1).map((p) => `${p[0]},${p[1]}`)).size < 3) {
    errors.push({ pointer, message: 'needs at least 3 distinct corners' });
    return null;
  }
  return out;
}
