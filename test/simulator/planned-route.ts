/**
 * A planned day for a simulated unit: legs of driving (a distance at a speed
 * and heading), idling (engine on, standing) and parking (engine off), one
 * point every `intervalS`. Each trip begins with a point at the key turn
 * (engine on, standing, where it was parked), as units report it. What the
 * plan drove is kept (`trips`, `stops`, `idles`), for tests to compare the
 * platform's reports with; `source()` hands the points to a SimulatedDevice.
 */
import type { SimPoint } from './encoders/types.js';
import type { PointSource } from './route.js';

export type Leg = { drive_km: number; speed_kmh: number; heading_deg: number } | { idle_s: number } | { park_s: number };

export interface PlannedSpan {
  start: number;
  end: number | null;
}

export interface PlannedTrip extends PlannedSpan {
  distance_m: number;
}

const EARTH_M_PER_DEG = 111_320;

export class PlannedRoute {
  readonly points: SimPoint[] = [];
  readonly trips: PlannedTrip[] = [];
  readonly stops: PlannedSpan[] = [];
  readonly idles: PlannedSpan[] = [];

  constructor(o: { startLat: number; startLng: number; startTime: number; intervalS: number; legs: Leg[] }) {
    let lat = o.startLat;
    let lng = o.startLng;
    let t = o.startTime;
    let odometer = 0;
    let engineOn = false;
    const step = o.intervalS * 1000;
    const push = (speed: number, heading: number, ignition: boolean) => {
      this.points.push({
        fixTime: t,
        lat: Math.round(lat * 1e6) / 1e6,
        lng: Math.round(lng * 1e6) / 1e6,
        speedKmh: speed,
        headingDeg: heading,
        altitudeM: 20,
        satellites: 9,
        ignition,
        odometerM: Math.round(odometer),
      });
      t += step;
    };
    for (const leg of o.legs) {
      if ('park_s' in leg) {
        if (engineOn) {
          this.trips.at(-1)!.end = t;
          this.stops.push({ start: t, end: null });
        }
        engineOn = false;
        for (let n = 0; n < Math.round(leg.park_s / o.intervalS); n++) push(0, 0, false);
        continue;
      }
      if (!engineOn) {
        const last = this.stops.at(-1);
        if (last) last.end = t;
        this.trips.push({ start: t, end: null, distance_m: 0 });
        engineOn = true;
        if (!('idle_s' in leg)) push(0, 0, true); // the key turn
      }
      if ('idle_s' in leg) {
        this.idles.push({ start: t, end: null });
        for (let n = 0; n < Math.round(leg.idle_s / o.intervalS); n++) push(0, 0, true);
        this.idles.at(-1)!.end = t;
        continue;
      }
      const total = leg.drive_km * 1000;
      const perStep = (leg.speed_kmh / 3.6) * o.intervalS;
      const rad = (leg.heading_deg * Math.PI) / 180;
      for (let done = 0; done < total - 1e-6; ) {
        const metres = Math.min(perStep, total - done);
        done += metres;
        odometer += metres;
        lat += (metres * Math.cos(rad)) / EARTH_M_PER_DEG;
        lng += (metres * Math.sin(rad)) / (EARTH_M_PER_DEG * Math.cos((lat * Math.PI) / 180));
        push(leg.speed_kmh, leg.heading_deg, true);
      }
      this.trips.at(-1)!.distance_m += total;
    }
  }

  /** The points in the order a unit sends them: `order` (default: as driven) may hold buffered records back. */
  source(order: readonly SimPoint[] = this.points): PointSource {
    let cursor = 0;
    return {
      next() {
        const p = order[cursor];
        if (!p) throw new Error('the planned route has no more points');
        cursor += 1;
        return p;
      },
      get remaining() {
        return order.length - cursor;
      },
    };
  }
}
