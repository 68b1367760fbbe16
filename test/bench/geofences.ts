/**
 * Geofence containment throughput: 10k random circles and polygons around a
 * city, 1M random points through the same in-memory index the crossing
 * detector uses (R-tree over bounding boxes, cheap exact-safe filters, Turf's booleanPointInPolygon on the boundary).
 */
import { circlePolygon } from '../../api/geofence-input.js';
import { GeofenceIndex, compileFence, type Fence } from '../../projections/geofences/index.js';
import { mulberry32 } from '../simulator/route.js';

export const CITY = { lat: 56.95, lng: 24.1 };
/** Half the side of the square the geofences and points fall in (~40 km x 40 km). */
const SPAN_DEG = { lat: 0.18, lng: 0.33 };
const TARGET_CHECKS_PER_S = 200_000;

export function randomPoint(rand: () => number): { lat: number; lng: number } {
  return { lat: CITY.lat + (rand() * 2 - 1) * SPAN_DEG.lat, lng: CITY.lng + (rand() * 2 - 1) * SPAN_DEG.lng };
}

/**
 * Half circles, half star-shaped polygons (angles sorted, so never
 * self-intersecting) of 4..40 vertices; sizes log-uniform 50 m..2 km, like
 * depots, customer sites and a few districts.
 */
export function randomGeofences(count: number, rand: () => number): Array<{ id: string; name: string; coordinates: number[][][] }> {
  const out = [];
  for (let i = 0; i < count; i++) {
    const c = randomPoint(rand);
    const radius = 50 * Math.exp(rand() * Math.log(40));
    const id = `geo_${String(i).padStart(6, '0')}`;
    if (i % 2 === 0) {
      out.push({ id, name: `circle ${i}`, coordinates: circlePolygon(c, radius).coordinates });
      continue;
    }
    const n = 4 + Math.floor(rand() * 37);
    const angles = Array.from({ length: n }, () => rand() * 2 * Math.PI).sort((a, b) => a - b);
    const mPerDegLng = 111_320 * Math.cos((c.lat * Math.PI) / 180);
    const ring = angles.map((a) => {
      const r = radius * (0.4 + 0.6 * rand());
      return [c.lng + (r * Math.cos(a)) / mPerDegLng, c.lat + (r * Math.sin(a)) / 111_320];
    });
    ring.push([...ring[0]!]);
    out.push({ id, name: `polygon ${i}`, coordinates: [ring] });
  }
  return out;
}

export interface GeofenceFigure {
  geofences: number;
  checks: number;
  checksPerSecond: number;
  hitsPerCheck: number;
  buildMs: number;
}

export function benchGeofences(geofences = 10_000, checks = 1_000_000): GeofenceFigure {
  const rand = mulberry32(42);
  const fences: Fence[] = randomGeofences(geofences, rand).map((g) => compileFence(g.id, g.name, g.coordinates));
  const built = performance.now();
  const index = new GeofenceIndex(fences);
  const buildMs = performance.now() - built;
  const lat = new Float64Array(checks);
  const lng = new Float64Array(checks);
  for (let i = 0; i < checks; i++) {
    const p = randomPoint(rand);
    lat[i] = p.lat;
    lng[i] = p.lng;
  }
  // Warm up the JIT before measuring.
  for (let i = 0; i < 50_000; i++) index.containing(lat[i]!, lng[i]!);
  let hits = 0;
  const started = performance.now();
  for (let i = 0; i < checks; i++) hits += index.containing(lat[i]!, lng[i]!).length;
  const elapsed = (performance.now() - started) / 1000;
  return { geofences, checks, checksPerSecond: checks / elapsed, hitsPerCheck: hits / checks, buildMs };
}

export function runGeofenceBench(): GeofenceFigure {
  const f = benchGeofences();
  process.stdout.write('geofences (point checks/s against one customer\'s geofences, one core)\n');
  process.stdout.write(
    `  ${f.geofences.toLocaleString('en-US')} geofences, ${f.checks.toLocaleString('en-US')} points  ` +
      `${Math.round(f.checksPerSecond).toLocaleString('en-US').padStart(11)} checks/s  ` +
      `(${f.hitsPerCheck.toFixed(2)} geofences per point, index built in ${f.buildMs.toFixed(1)} ms)  ` +
      `target ${TARGET_CHECKS_PER_S.toLocaleString('en-US')}: ${f.checksPerSecond >= TARGET_CHECKS_PER_S ? 'met' : 'MISSED'}\n`,
  );
  return f;
}
