/**
 * Trips, stops, idling and accumulators from the log: a planned day's fixes
 * against what the plan drove, late fixes spliced, motion-only units, GPS
 * jumps, rules per customer, accumulators set and continued.
 */
import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../core/events.js';
import { DEFAULT_TRIP_RULES } from '../../core/trip-rules.js';
import { accumulatorsOf, spanPage, tripPage } from '../../api/queries/trips.js';
import { devicesProjection } from '../../projections/devices/index.js';
import { geofencesProjection } from '../../projections/geofences/index.js';
import { tenantsProjection } from '../../projections/tenants/index.js';
import { foldFix, INITIAL_TRIP_STATE, type TripFix, type TripWrite } from '../../projections/trips/fold.js';
import { tripsProjection } from '../../projections/trips/index.js';
import { PlannedRoute, type Leg } from '../simulator/planned-route.js';
import type { SimPoint } from '../simulator/encoders/types.js';
import { readModelDb } from '../support/read-model-db.js';

const T0 = Date.UTC(2026, 10, 20, 6);
const INTERVAL_S = 10;
const DAY: Leg[] = [
  { park_s: 600 },
  { drive_km: 6, speed_kmh: 50, heading_deg: 0 },
  { idle_s: 300 },
  { drive_km: 3.5, speed_kmh: 70, heading_deg: 90 },
  { park_s: 1200 },
  { drive_km: 8, speed_kmh: 60, heading_deg: 200 },
  { park_s: 900 },
];

function setup() {
  const rm = readModelDb([tenantsProjection, devicesProjection, geofencesProjection, tripsProjection]);
  rm.apply({ type: 'CustomerCreated', data: { customer_id: 'cus_1', name: 'Acme', plan: 'pro', created_at: 0 } });
  rm.apply({
    type: 'DeviceRegistered',
    data: { device_id: 'dev_1', customer_id: 'cus_1', imei: '356938035643809', model: 'FMB920', name: 'Van', group_id: null, driver_id: null, terminal_id: null, created_at: 0 },
  });
  const fix = (p: SimPoint, o: { ignition?: boolean | null; odometer?: boolean } = {}): DomainEvent => ({
    type: 'PositionRecorded',
    data: {
      device_id: 'dev_1', customer_id: 'cus_1', protocol: 'teltonika', fix_time: p.fixTime, received_at: p.fixTime, valid: true, lat: p.lat, lng: p.lng,
      speed_kmh: p.speedKmh, heading_deg: p.headingDeg, altitude_m: null, satellites: 9,
      ignition: o.ignition === undefined ? p.ignition : o.ignition, odometer_m: o.odometer === false ? null : p.odometerM, attributes: {},
    },
  });
  const all = { deviceIds: null, driverIds: null, from: null, to: null, after: null, limit: 1000 };
  const trips = (customerId = 'cus_1') => tripPage(rm.db, customerId, all);
  const spans = (table: 'stops' | 'idles') => spanPage(rm.db, table, 'cus_1', all);
  /** A square geofence of about 1 km around a point. */
  const fence = (id: string, at: { lat: number; lng: number }, customerId = 'cus_1'): DomainEvent => {
    const d = 0.005;
    const ring = [[at.lng - d, at.lat - d], [at.lng + d, at.lat - d], [at.lng + d, at.lat + d], [at.lng - d, at.lat + d], [at.lng - d, at.lat - d]];
    return {
      type: 'GeofenceCreated',
      data: { geofence_id: id, customer_id: customerId, name: id, shape: 'polygon', geometry: { type: 'Polygon', coordinates: [ring] }, center: null, radius_m: null, created_at: T0 },
    };
  };
  return { ...rm, fix, trips, spans, fence };
}

/** The plan's point at time t. */
const pointAt = (plan: PlannedRoute, t: number) => plan.points.find((p) => p.fixTime === t)!;

const route = () => new PlannedRoute({ startLat: 56.95, startLng: 24.1, startTime: T0, intervalS: INTERVAL_S, legs: DAY });

describe('trips read model', () => {
  it('cuts a planned day into its trips, stops and idles, within one report interval and 2 % of the distance', () => {
    const { apply, fix, trips: tripsOf, spans } = setup();
    const plan = route();
    for (const p of plan.points) apply(fix(p));
    const trips = tripsOf();
    expect(trips.map((t) => [t.start_t, t.end_t])).toEqual(plan.trips.map((t) => [t.start, t.end]));
    trips.forEach((t, i) => expect(Math.abs(t.distance_m - plan.trips[i]!.distance_m) / plan.trips[i]!.distance_m).toBeLessThan(0.02));
    expect(trips[0]!.idle_ms).toBe(300_000);
    expect(trips[0]!.max_speed_kmh).toBe(70);
    expect(trips[1]!.idle_ms).toBe(0);
    // The first stop began before the first fix: it starts with it.
    expect(spans('stops').map((s) => [s.start_t, s.end_t])).toEqual([[T0, plan.trips[0]!.start], ...plan.stops.map((s) => [s.start, s.end])]);
    expect(spans('idles').map((s) => [s.start_t, s.end_t])).toEqual(plan.idles.map((s) => [s.start, s.end]));
  });

  it('splices fixes that arrive late (a coverage gap sent after newer records) into the trip they belong to', () => {
    const inOrder = setup();
    const late = setup();
    const plan = route();
    for (const p of plan.points) inOrder.apply(inOrder.fix(p));
    // The middle of the first trip (and the idle) reaches the platform only after the second trip.
    const gap = new Set(plan.points.filter((p) => p.fixTime > plan.trips[0]!.start + 120_000 && p.fixTime < plan.trips[0]!.end! - 60_000));
    for (const p of plan.points) if (!gap.has(p)) late.apply(late.fix(p));
    expect(late.trips()).not.toEqual(inOrder.trips());
    for (const p of gap) late.apply(late.fix(p));
    expect(late.trips()).toEqual(inOrder.trips());
    for (const table of ['stops', 'idles'] as const) expect(late.spans(table)).toEqual(inOrder.spans(table));
  });

  it('cuts trips by motion for a unit that reports no ignition, and finds no idling', () => {
    const { apply, fix, trips: tripsOf, spans } = setup();
    const plan = route();
    for (const p of plan.points) apply(fix(p, { ignition: null }));
    const trips = tripsOf();
    // Without ignition the five minutes of idling are standing longer than the minimal stop: they split the first trip.
    expect(trips).toHaveLength(3);
    expect(trips[1]!.start_t).toBe(plan.idles[0]!.end);
    // Motion starts a trip with the first moving fix (one report after the key turn) and ends it at the first standing one.
    expect(trips[0]!.start_t).toBe(plan.trips[0]!.start + INTERVAL_S * 1000);
    expect(trips[0]!.end_t).toBe(plan.idles[0]!.start);
    expect(trips[2]!.end_t).toBe(plan.trips[1]!.end);
    expect(spans('idles')).toEqual([]);
  });

  it('takes the ignition of status records (GT06 heartbeats) for fixes that carry none', () => {
    const { apply, fix, trips: tripsOf, spans, db } = setup();
    const plan = route();
    let ignition: boolean | null = null;
    for (const p of plan.points) {
      if (p.ignition !== ignition) {
        // The heartbeat telling the new ACC state comes a second before the fix, timed by the server's clock.
        apply({ type: 'StatusReported', data: { device_id: 'dev_1', customer_id: 'cus_1', protocol: 'gt06', at: p.fixTime - 1000, received_at: p.fixTime - 1000, ignition: p.ignition, attributes: {} } });
        ignition = p.ignition;
      }
      apply(fix(p, { ignition: null }));
    }
    // As with the ignition on every fix: the key turns cut the trips (not the five-minute idle), and the idle is found.
    // A trip ends with the heartbeat that said the key turned off, a second before the fix that followed it.
    const trips = tripsOf();
    expect(trips.map((t) => [t.start_t, t.end_t])).toEqual(plan.trips.map((t) => [t.start, t.end! - 1000]));
    expect(trips[0]!.idle_ms).toBe(300_000);
    expect(spans('idles').map((s) => [s.start_t, s.end_t])).toEqual(plan.idles.map((s) => [s.start, s.end]));
    const ignitionOnMs = plan.trips.reduce((n, t) => n + (t.end! - 1000 - t.start), 0);
    expect(accumulatorsOf(db, 'cus_1', 'dev_1')!.engine_ms).toBe(ignitionOnMs);
  });

  it('ends a trip at the key-off heartbeat of a unit whose GPS sleeps while parked (heartbeats only)', () => {
    const { apply, fix, trips: tripsOf, spans } = setup();
    const plan = route();
    const heartbeat = (t: number, on: boolean): DomainEvent => ({
      type: 'StatusReported',
      data: { device_id: 'dev_1', customer_id: 'cus_1', protocol: 'gt06', at: t, received_at: t, ignition: on, attributes: {} },
    });
    let ignition: boolean | null = null;
    let lastHeartbeat = 0;
    for (const p of plan.points) {
      if (p.ignition !== ignition) {
        apply(heartbeat(p.fixTime - 1000, p.ignition));
        ignition = p.ignition;
        lastHeartbeat = p.fixTime;
      }
      if (p.ignition) apply(fix(p, { ignition: null }));
      // Key off: no fix, a heartbeat every five minutes.
      else if (p.fixTime - lastHeartbeat >= 300_000) {
        apply(heartbeat(p.fixTime, false));
        lastHeartbeat = p.fixTime;
      }
    }
    const trips = tripsOf();
    expect(trips.map((t) => [t.start_t, t.end_t])).toEqual(plan.trips.map((t) => [t.start, t.end! - 1000]));
    trips.forEach((t, i) => expect(Math.abs(t.distance_m - plan.trips[i]!.distance_m) / plan.trips[i]!.distance_m).toBeLessThan(0.02));
    // Each stop stands where the last fix before the key-off put the vehicle.
    const stops = spans('stops').filter((s) => s.start_t !== T0);
    expect(stops.map((s) => s.start_t)).toEqual(plan.trips.map((t) => t.end! - 1000));
    expect(stops.map((s) => [s.lat, s.lng])).toEqual(plan.trips.map((t) => [pointAt(plan, t.end! - INTERVAL_S * 1000).lat, pointAt(plan, t.end! - INTERVAL_S * 1000).lng]));
  });

  it('lets a reported ignition lapse: fixes long after the last heartbeat are cut by motion', () => {
    const { apply, fix, trips: tripsOf } = setup();
    const plan = route();
    apply({ type: 'StatusReported', data: { device_id: 'dev_1', customer_id: 'cus_1', protocol: 'gt06', at: T0 - 3_600_000, received_at: T0 - 3_600_000, ignition: true, attributes: {} } });
    for (const p of plan.points) apply(fix(p, { ignition: null }));
    // An hour-old "on" would make the first park a trip; instead speed decides, as for a unit without ignition.
    expect(tripsOf()).toHaveLength(3);
    expect(tripsOf()[0]!.start_t).toBe(plan.trips[0]!.start + INTERVAL_S * 1000);
  });

  it('names the geofences trips start and end in, and stops stand in, as they were when each fix came', () => {
    const { apply, fix, trips: tripsOf, spans, fence } = setup();
    const plan = route();
    const [first, second] = plan.trips as [(typeof plan.trips)[0], (typeof plan.trips)[0]];
    apply(fence('geo_depot', pointAt(plan, first.start)));
    apply(fence('geo_client', pointAt(plan, first.end!)));
    // Another customer's geofence over the depot is none of this device's business.
    apply(fence('geo_foreign', pointAt(plan, first.start), 'cus_2'));
    for (const p of plan.points) {
      // A geofence drawn over the whole area once the second trip is under way: its start was outside any such.
      if (p.fixTime === second.start + 60_000) apply(fence('geo_late', pointAt(plan, second.start)));
      apply(fix(p));
    }
    const trips = tripsOf();
    expect(trips.map((t) => [JSON.parse(t.start_geofences), JSON.parse(t.end_geofences)])).toEqual([
      [['geo_depot'], ['geo_client']],
      [['geo_client'], []],
    ]);
    // The stop the day began in (the depot), the one after each trip; the idle of the first trip is on the road.
    expect(spans('stops').map((s) => JSON.parse(s.geofences))).toEqual([['geo_depot'], ['geo_client'], []]);
    expect(spans('idles').map((s) => JSON.parse(s.geofences))).toEqual([[]]);
  });

  it('keeps the geofences of spliced late fixes: the rows equal those of an in-order arrival', () => {
    const inOrder = setup();
    const late = setup();
    const plan = route();
    for (const rm of [inOrder, late]) {
      rm.apply(rm.fence('geo_depot', pointAt(plan, plan.trips[0]!.start)));
      rm.apply(rm.fence('geo_client', pointAt(plan, plan.trips[0]!.end!)));
    }
    for (const p of plan.points) inOrder.apply(inOrder.fix(p));
    // The first trip's end (and the stop it opens) reach the platform after the second trip.
    const gap = new Set(plan.points.filter((p) => p.fixTime >= plan.trips[0]!.end! - 60_000 && p.fixTime < plan.trips[0]!.end! + 120_000));
    for (const p of plan.points) if (!gap.has(p)) late.apply(late.fix(p));
    for (const p of gap) late.apply(late.fix(p));
    // (A late fix takes its neighbour's accumulator readings, so only the odometer and engine hours at the trip's end may differ.)
    const cut = (rm: typeof late) => rm.trips().map((t) => [t.start_t, t.end_t, t.start_geofences, t.end_geofences]);
    expect(cut(late)).toEqual(cut(inOrder));
    expect(late.spans('stops')).toEqual(inOrder.spans('stops'));
    expect(JSON.parse(late.trips()[0]!.end_geofences)).toEqual(['geo_client']);
  });

  it('leaves a GPS jump out of the distance', () => {
    const { apply, fix, trips: tripsOf } = setup();
    const plan = route();
    const jumped = plan.points.map((p, i) => (i === 100 ? { ...p, lat: p.lat + 0.5 } : p));
    for (const p of jumped) apply(fix(p));
    const trips = tripsOf();
    expect(Math.abs(trips[0]!.distance_m - plan.trips[0]!.distance_m) / plan.trips[0]!.distance_m).toBeLessThan(0.02);
  });

  it('applies a customer\'s own rules to the trips after them', () => {
    const { apply, fix, trips: tripsOf } = setup();
    apply({ type: 'TripRulesSet', data: { customer_id: 'cus_1', rules: { ...DEFAULT_TRIP_RULES, min_stop_duration_s: 1800 }, set_at: T0 } });
    const legs = [...DAY.slice(0, -1), { park_s: 3600 }];
    for (const p of new PlannedRoute({ startLat: 56.95, startLng: 24.1, startTime: T0, intervalS: INTERVAL_S, legs }).points) apply(fix(p));
    // The 20-minute park no longer ends a trip: the day's drives are one.
    expect(tripsOf()).toHaveLength(1);
  });

  it('keeps another customer\'s trips out of the page', () => {
    const { apply, fix, trips: tripsOf } = setup();
    for (const p of route().points) apply(fix(p));
    expect(tripsOf('cus_2')).toEqual([]);
  });
});

describe('accumulators', () => {
  it('counts engine hours only while the ignition is on, and continues the odometer from a value set', () => {
    const { apply, fix, db } = setup();
    const plan = route();
    const half = Math.floor(plan.points.length / 2);
    for (const p of plan.points.slice(0, half)) apply(fix(p, { odometer: false }));
    const before = accumulatorsOf(db, 'cus_1', 'dev_1')!;
    apply({ type: 'AccumulatorsSet', data: { customer_id: 'cus_1', device_id: 'dev_1', odometer_km: 120_000, engine_hours: 5000, set_at: T0 } });
    expect(accumulatorsOf(db, 'cus_1', 'dev_1')).toEqual({ odometer_m: 120_000_000, engine_ms: 5000 * 3_600_000 });
    for (const p of plan.points.slice(half)) apply(fix(p, { odometer: false }));
    const after = accumulatorsOf(db, 'cus_1', 'dev_1')!;
    const all = setup();
    for (const p of plan.points) all.apply(all.fix(p, { odometer: false }));
    const whole = accumulatorsOf(all.db, 'cus_1', 'dev_1')!;
    // What was driven after the set adds to the set value.
    expect(after.odometer_m - 120_000_000).toBeCloseTo(whole.odometer_m - before.odometer_m, 3);
    expect(after.engine_ms - 5000 * 3_600_000).toBe(whole.engine_ms - before.engine_ms);
    const ignitionOnMs = plan.trips.reduce((n, t) => n + (t.end! - t.start), 0);
    expect(whole.engine_ms).toBe(ignitionOnMs);
    expect(Math.abs(whole.odometer_m - plan.trips.reduce((n, t) => n + t.distance_m, 0))).toBeLessThan(0.02 * whole.odometer_m);
  });

  it('takes the unit\'s own odometer when it reports one', () => {
    const { apply, fix, db } = setup();
    const plan = route();
    for (const p of plan.points) apply(fix(p));
    expect(accumulatorsOf(db, 'cus_1', 'dev_1')!.odometer_m).toBe(plan.points.at(-1)!.odometerM);
    expect(accumulatorsOf(db, 'cus_2', 'dev_1')).toBeNull();
  });
});

describe('fold', () => {
  const at = (t: number, km: number, speed: number, ignition: boolean | null): TripFix => ({
    t, lat: 56.9 + km / 111.195, lng: 24.1, speed_kmh: speed, ignition, odometer_m: 0, engine_s: 0, driver_id: null, geofences: [],
  });

  it('bridges a pause shorter than the minimal stop', () => {
    let state = INITIAL_TRIP_STATE;
    const writes: TripWrite[] = [];
    const fixes = [at(0, 0, 0, true), at(60_000, 1, 60, true), at(120_000, 2, 0, false), at(180_000, 2, 0, true), at(240_000, 3, 60, true), at(300_000, 3, 0, false), at(600_000, 3, 0, false)];
    for (const f of fixes) {
      const step = foldFix(state, f, DEFAULT_TRIP_RULES);
      state = step.state;
      writes.push(...step.writes);
    }
    const trips = writes.filter((w) => w.table === 'trips' && 'row' in w);
    expect(trips).toHaveLength(1);
    expect(trips[0]).toMatchObject({ row: { start: { t: 0 }, end: { t: 300_000 } } });
  });
});
