/**
 * Plausible vehicle routes, deterministic per seed: speeds that change with
 * bounded acceleration, turns at moderate speed, stops, and now and then a
 * harsh brake. One point per simulated second.
 */
import type { DeviceAlarmKind } from '../../core/alarms.js';
import type { SimPoint } from './encoders/types.js';

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const EARTH_M_PER_DEG = 111_320;

export interface RouteOptions {
  seed: number;
  startLat: number;
  startLng: number;
  /** Fix time of the first point, ms. */
  startTime: number;
  /** Chance per point of a harsh brake (speed drops by 20-35 km/h in one second). */
  harshBrakeChance?: number;
}

/** Where a simulated unit's points come from: a random Route, or a planned one (planned-route.ts) that ends. */
export interface PointSource {
  next(): SimPoint;
  /** Points left; absent for a source that never ends. */
  readonly remaining?: number;
}

export class Route implements PointSource {
  private readonly rand: () => number;
  private lat: number;
  private lng: number;
  private speed = 0;
  private heading: number;
  private targetSpeed = 50;
  private time: number;
  private odometer = 0;
  private readonly harshBrakeChance: number;

  constructor(options: RouteOptions) {
    this.rand = mulberry32(options.seed);
    this.lat = options.startLat;
    this.lng = options.startLng;
    this.time = options.startTime;
    this.heading = Math.floor(this.rand() * 360);
    this.harshBrakeChance = options.harshBrakeChance ?? 0.01;
  }

  next(): SimPoint {
    let alarm: DeviceAlarmKind | undefined;
    if (this.rand() < 0.02) this.targetSpeed = this.rand() < 0.15 ? 0 : 20 + this.rand() * 90;
    if (this.speed > 40 && this.rand() < this.harshBrakeChance) {
      this.speed = Math.max(0, this.speed - (20 + this.rand() * 15));
      alarm = 'event.harsh_brake';
    } else {
      const delta = Math.max(-6, Math.min(4, this.targetSpeed - this.speed));
      this.speed = Math.max(0, this.speed + delta);
    }
    if (this.speed > 5 && this.rand() < 0.05) this.heading = (this.heading + (this.rand() < 0.5 ? 90 : 270)) % 360;
    else this.heading = (this.heading + (this.rand() - 0.5) * 6 + 360) % 360;
    const metres = this.speed / 3.6;
    this.odometer += metres;
    const rad = (this.heading * Math.PI) / 180;
    this.lat += (metres * Math.cos(rad)) / EARTH_M_PER_DEG;
    this.lng += (metres * Math.sin(rad)) / (EARTH_M_PER_DEG * Math.cos((this.lat * Math.PI) / 180));
    this.time += 1000;
    const point: SimPoint = {
      fixTime: this.time,
      // Protocols carry 1e-6 or 1e-7 degrees; round so sent and stored values compare exactly.
      lat: Math.round(this.lat * 1e6) / 1e6,
      lng: Math.round(this.lng * 1e6) / 1e6,
      speedKmh: Math.round(this.speed),
      headingDeg: Math.round(this.heading) % 360,
      altitudeM: 20 + Math.round(this.rand() * 10),
      satellites: 8 + Math.floor(this.rand() * 5),
      ignition: true,
      odometerM: Math.round(this.odometer),
    };
    if (alarm) point.alarm = alarm;
    return point;
  }
}
