/** Driver scores: the formula, the stretch rules, and daily totals built from the log. */
import { describe, expect, it } from 'vitest';
import type { DeviceEventRaised, DomainEvent } from '../../core/events.js';
import { dailyTotals } from '../../api/queries/driver-scores.js';
import { devicesProjection } from '../../projections/devices/index.js';
import { driverScoresProjection } from '../../projections/driver-scores/index.js';
import { SCORED_KINDS, scoreOf, sumTotals, type ScoreTotals } from '../../projections/driver-scores/score.js';
import { DRIVING_GAP_CAP_MS, haversineM, stretch, type ScoreFix } from '../../projections/driver-scores/segment.js';
import { driversProjection } from '../../projections/drivers/index.js';
import { tenantsProjection } from '../../projections/tenants/index.js';
import { mulberry32 } from '../simulator/route.js';
import { readModelDb } from '../support/read-model-db.js';

const KM = 1000;
const totals = (km: number, counts: Record<string, number> = {}, driving_s = 3600, overspeed_s = 0): ScoreTotals => ({
  distance_m: km * KM,
  driving_ms: driving_s * 1000,
  overspeed_ms: overspeed_s * 1000,
  counts,
});

describe('score formula', () => {
  it('is null under 5 km, with counts kept and nothing per 100 km', () => {
    const s = scoreOf(totals(4.999, { 'event.harsh_brake': 3 }));
    expect(s.score).toBeNull();
    expect(s.distance_km).toBe(4.999);
    expect(s.breakdown['event.harsh_brake']).toEqual({ count: 3, per_100km: null, points: null });
    expect(scoreOf(totals(5)).score).toBe(100);
  });

  it('takes weight x count x 100 / km per kind', () => {
    const s = scoreOf(totals(100, { 'event.harsh_brake': 2, 'event.acceleration': 1, 'alarm.bsd': 4, 'geofence.enter': 50 }));
    // 100 - 2*2 - 1.5*1 - 0.5*4 = 92.5; geofence crossings carry no weight.
    expect(s.score).toBe(92.5);
    expect(s.breakdown['event.harsh_brake']).toEqual({ count: 2, per_100km: 2, points: 4 });
    expect(s.breakdown['event.acceleration']).toEqual({ count: 1, per_100km: 1, points: 1.5 });
    expect(s.breakdown['alarm.bsd']).toEqual({ count: 4, per_100km: 4, points: 2 });
    expect(Object.keys(s.breakdown).sort()).toEqual([...SCORED_KINDS].sort());
  });

  it('counts overspeed by its share of driving time, not by the number of events', () => {
    const s = scoreOf(totals(50, { 'event.overspeed': 7 }, 3600, 360));
    expect(s.breakdown['event.overspeed']).toEqual({ count: 7, per_100km: 14, points: 10 });
    expect(s.score).toBe(90);
    expect(s.driving_s).toBe(3600);
  });

  it('clamps at 0 and at 100', () => {
    expect(scoreOf(totals(10, { 'alarm.adas.collision': 10 })).score).toBe(0);
    expect(scoreOf(totals(1000)).score).toBe(100);
  });

  it('sums days into a window', () => {
    const sum = sumTotals([totals(3, { 'event.curve': 1 }), totals(4, { 'event.curve': 1 })]);
    expect(sum).toEqual({ distance_m: 7000, driving_ms: 7_200_000, overspeed_ms: 0, counts: { 'event.curve': 2 } });
    // 100 - 1.5 * 2 * 100 / 7 = 57.14..., given to one decimal.
    expect(scoreOf(sum).score).toBe(57.1);
  });
});

const DEG_PER_KM = 1 / 111.195;
const at = (t: number, km: number, speed: number | null): ScoreFix => ({ t, lat: 56.9 + km * DEG_PER_KM, lng: 24.1, speed_kmh: speed });

describe('stretch rules', () => {
  it('measures great-circle distance', () => {
    expect(haversineM(56.9, 24.1, 57.9, 24.1)).toBeCloseTo(111_195, -1);
  });

  it('counts a moving stretch, its time, and its overspeed above the limit', () => {
    const c = stretch(at(0, 0, 60), at(60_000, 1, 60), 90);
    expect(c.distance_m).toBeCloseTo(1000, 0);
    expect(c).toMatchObject({ driving_ms: 60_000, overspeed_ms: 0 });
    expect(stretch(at(0, 0, 100), at(36_000, 1, 100), 90).overspeed_ms).toBe(36_000);
    expect(stretch(at(0, 0, 100), at(36_000, 1, 100), null).overspeed_ms).toBe(0);
  });

  it('ignores a parked vehicle\'s GPS drift', () => {
    expect(stretch(at(0, 0, 0), at(30_000, 0.02, 1), 90)).toEqual({ distance_m: 0, driving_ms: 0, overspeed_ms: 0 });
  });

  it('ignores implausible jumps', () => {
    expect(stretch(at(0, 0, 50), at(10_000, 10, 50), 90).distance_m).toBe(0);
  });

  it('caps the driving time of a gap and drops stretches after a long silence', () => {
    const gap = stretch(at(0, 0, 50), at(20 * 60_000, 15, 50), 90);
    expect(gap.driving_ms).toBe(DRIVING_GAP_CAP_MS);
    expect(gap.distance_m).toBeCloseTo(15_000, -1);
    expect(stretch(at(0, 0, 50), at(40 * 60_000, 30, 50), 90).distance_m).toBe(0);
  });

  it('uses the implied speed when the device reports none', () => {
    expect(stretch(at(0, 0, null), at(60_000, 2, null), 90)).toMatchObject({ driving_ms: 60_000, overspeed_ms: 60_000 });
  });
});

const DAY1 = Date.UTC(2026, 10, 20);
const MIN = 60_000;

function setup() {
  const rm = readModelDb([tenantsProjection, devicesProjection, driversProjection, driverScoresProjection]);
  rm.apply({ type: 'CustomerCreated', data: { customer_id: 'cus_1', name: 'Acme', plan: 'pro', speed_limit_kmh: 90, created_at: 0 } });
  for (const driver_id of ['drv_1', 'drv_2']) {
    rm.apply({ type: 'DriverCreated', data: { driver_id, customer_id: 'cus_1', name: driver_id, external_id: null, created_at: 0 } });
  }
  rm.apply({
    type: 'DeviceRegistered',
    data: {
      device_id: 'dev_1', customer_id: 'cus_1', imei: '356938035643809', model: 'FMB920', name: 'Van', group_id: null,
      driver_id: 'drv_1', terminal_id: null, created_at: 0,
    },
  });
  const fix = (t: number, km: number, speed: number | null = 60, receivedAt = t): DomainEvent => ({
    type: 'PositionRecorded',
    data: {
      device_id: 'dev_1', customer_id: 'cus_1', protocol: 'teltonika', fix_time: t, received_at: receivedAt, valid: true, lat: 56.9 + km * DEG_PER_KM,
      lng: 24.1, speed_kmh: speed, heading_deg: 0, altitude_m: null, satellites: 9, ignition: true, odometer_m: null, attributes: {},
    },
  });
  const raised = (kind: DeviceEventRaised['data']['kind'], t: number, driver_id: string | null = 'drv_1'): DomainEvent => ({
    type: 'DeviceEventRaised',
    data: {
      event_id: `evt_${kind}_${t}`, kind, customer_id: 'cus_1', device_id: 'dev_1', driver_id, occurred_at: t, severity: 'medium', source: 'server',
      position: null, fields: {}, context: {}, media: [],
    },
  });
  const days = (driverId = 'drv_1') => dailyTotals(rm.db, driverId, '2026-11-01', '2026-12-01');
  return { ...rm, fix, raised, days };
}

describe('daily totals from the log', () => {
  it('adds distance and driving time per UTC day of the later fix, events by day and kind', () => {
    const { apply, fix, raised, days } = setup();
    // 60 km/h, one fix a minute, from 23:55 on day 1 to 00:05 on day 2.
    for (let i = 0; i <= 10; i++) apply(fix(DAY1 + 24 * 60 * MIN - 5 * MIN + i * MIN, i));
    apply(raised('event.harsh_brake', DAY1 + 24 * 60 * MIN - 2 * MIN));
    apply(raised('event.harsh_brake', DAY1 + 24 * 60 * MIN + 2 * MIN));
    apply(raised('event.harsh_brake', DAY1 + 24 * 60 * MIN + 3 * MIN, null)); // no driver: nobody's score
    const d = days();
    expect([...d.keys()]).toEqual(['2026-11-20', '2026-11-21']);
    // Stretches ending 23:56..23:59 are day 1's; the one ending at 00:00 opens day 2.
    expect(d.get('2026-11-20')!.distance_m).toBeCloseTo(4000, -1);
    expect(d.get('2026-11-20')!.driving_ms).toBe(4 * MIN);
    expect(d.get('2026-11-21')!.distance_m).toBeCloseTo(6000, -1);
    expect(d.get('2026-11-20')!.counts).toEqual({ 'event.harsh_brake': 1 });
    expect(d.get('2026-11-21')!.counts).toEqual({ 'event.harsh_brake': 1 });
    expect(scoreOf(d.get('2026-11-21')!).score).toBe(66.7); // 100 - 2 * 1 * 100 / 6
  });

  it('counts overspeed time against the customer limit and attributes stretches to the driver at the time', () => {
    const { apply, fix, days } = setup();
    apply(fix(DAY1, 0, 100));
    apply(fix(DAY1 + MIN, 1.6, 100));
    apply(fix(DAY1 + 2 * MIN, 3.2, 60));
    apply({ type: 'DeviceUpdated', data: { device_id: 'dev_1', customer_id: 'cus_1', changes: { driver_id: 'drv_2' }, updated_at: DAY1 + 2 * MIN } });
    apply(fix(DAY1 + 3 * MIN, 4.2, 60));
    const one = days('drv_1').get('2026-11-20')!;
    expect(one.driving_ms).toBe(2 * MIN);
    expect(one.overspeed_ms).toBe(MIN); // the 100 km/h stretch is over the limit of 90, the (100+60)/2 one is not
    expect(days('drv_2').get('2026-11-20')!.distance_m).toBeCloseTo(1000, -1);
    // Unassigned: the vehicle's fixes count for nobody.
    apply({ type: 'DeviceUpdated', data: { device_id: 'dev_1', customer_id: 'cus_1', changes: { driver_id: null }, updated_at: DAY1 + 4 * MIN } });
    apply(fix(DAY1 + 5 * MIN, 6.2, 60));
    expect(days('drv_2').get('2026-11-20')!.distance_m).toBeCloseTo(1000, -1);
  });

  it('late fixes are spliced in: any arrival order gives the in-order totals', () => {
    const route = Array.from({ length: 60 }, (_, i) => ({ t: DAY1 + 23 * 60 * MIN + i * 2 * MIN, km: i * 2 + (i % 7 === 0 ? 0 : 0.3), speed: 40 + (i % 9) * 10 }));
    const inOrder = setup();
    for (const p of route) inOrder.apply(inOrder.fix(p.t, p.km, p.speed));
    const shuffled = setup();
    const rand = mulberry32(5);
    const order = [...route].sort(() => rand() - 0.5);
    for (const p of order) shuffled.apply(shuffled.fix(p.t, p.km, p.speed));
    const a = inOrder.days();
    const b = shuffled.days();
    expect([...b.keys()]).toEqual([...a.keys()]);
    for (const [day, t] of a) {
      expect(b.get(day)!.distance_m).toBeCloseTo(t.distance_m, 3);
      expect(b.get(day)!.driving_ms).toBeCloseTo(t.driving_ms, 3);
      expect(b.get(day)!.overspeed_ms).toBeCloseTo(t.overspeed_ms, 3);
    }
    expect(a.get('2026-11-20')!.overspeed_ms).toBeGreaterThan(0);
  });

  it('counts an event once however often it reaches the log (the same event_id appended twice)', () => {
    const { apply, fix, raised, days } = setup();
    for (let i = 0; i <= 10; i++) apply(fix(DAY1 + i * MIN, i));
    const brake = raised('event.harsh_brake', DAY1 + 5 * MIN);
    apply(brake, 'derived-1');
    apply(brake, 'derived-1');
    expect(days().get('2026-11-20')!.counts).toEqual({ 'event.harsh_brake': 1 });
    apply(raised('event.harsh_brake', DAY1 + 6 * MIN));
    expect(days().get('2026-11-20')!.counts).toEqual({ 'event.harsh_brake': 2 });
  });

  it('a fix dated years ahead opens no day and leaves the real stretches as they were', () => {
    const withStray = setup();
    const clean = setup();
    for (let i = 0; i <= 10; i++) {
      if (i === 5) withStray.apply(withStray.fix(Date.UTC(2030, 0, 1), 3, 60, DAY1 + 4 * MIN + 30_000));
      withStray.apply(withStray.fix(DAY1 + i * MIN, i));
      clean.apply(clean.fix(DAY1 + i * MIN, i));
    }
    expect(withStray.days('drv_1')).toEqual(clean.days('drv_1'));
    expect(withStray.db.prepare('SELECT day FROM driver_days').pluck().all()).toEqual(['2026-11-20']);
  });

  it('a late event recomputes its own day and leaves the others alone', () => {
    const { apply, fix, raised, days } = setup();
    for (let i = 0; i <= 10; i++) apply(fix(DAY1 + 10 * 60 * MIN + i * MIN, i));
    for (let i = 0; i <= 10; i++) apply(fix(DAY1 + 34 * 60 * MIN + i * MIN, 100 + i));
    const before = days();
    expect(scoreOf(before.get('2026-11-20')!).score).toBe(100);
    apply(raised('alarm.dsm.fatigue', DAY1 + 10 * 60 * MIN + 3 * MIN)); // arrives a day late
    const after = days();
    expect(scoreOf(after.get('2026-11-20')!).score).toBe(100 - (3 * 100) / 10);
    expect(after.get('2026-11-21')).toEqual(before.get('2026-11-21'));
  });
});
