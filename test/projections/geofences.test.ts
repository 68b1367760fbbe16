/** Fleet stories for geofence crossings, and the spatial index against Turf. */
import { booleanPointInPolygon } from '@turf/turf';
import { describe, expect, it } from 'vitest';
import type { DeviceEventRaised, DomainEvent, GeofenceCreated } from '../../core/events.js';
import { circlePolygon } from '../../api/geofence-input.js';
import { devicesProjection } from '../../projections/devices/index.js';
import { CustomerFences } from '../../projections/geofences/customer-fences.js';
import { GeofenceIndex, compileFence, fenceContains, geofencesProjection } from '../../projections/geofences/index.js';
import { tenantsProjection } from '../../projections/tenants/index.js';
import { randomGeofences, randomPoint } from '../bench/geofences.js';
import { mulberry32 } from '../simulator/route.js';
import { readModelDb } from '../support/read-model-db.js';

const T0 = Date.UTC(2026, 10, 20, 8, 0, 0);
const MIN = 60_000;

// A depot: a square of about 1.2 km x 1.1 km around (56.95, 24.10).
const DEPOT: GeofenceCreated['data']['geometry'] = {
  type: 'Polygon',
  coordinates: [[[24.09, 56.945], [24.11, 56.945], [24.11, 56.955], [24.09, 56.955], [24.09, 56.945]]],
};
const INSIDE = { lat: 56.95, lng: 24.1 };
const OUTSIDE = { lat: 56.97, lng: 24.1 };

const registered: DomainEvent = {
  type: 'DeviceRegistered',
  data: {
    device_id: 'dev_1', customer_id: 'cus_1', imei: '356938035643809', model: 'FMB920', name: 'Van 7',
    group_id: null, driver_id: 'drv_1', terminal_id: null, created_at: T0 - MIN,
  },
};

function geofence(id: string, geometry: GeofenceCreated['data']['geometry'], extra: Partial<GeofenceCreated['data']> = {}): DomainEvent {
  return {
    type: 'GeofenceCreated',
    data: { geofence_id: id, customer_id: 'cus_1', name: `fence ${id}`, shape: 'polygon', geometry, center: null, radius_m: null, created_at: T0 - MIN, ...extra },
  };
}

function fix(t: number, at: { lat: number; lng: number }, valid = true, receivedAt = t + 500): DomainEvent {
  return {
    type: 'PositionRecorded',
    data: {
      device_id: 'dev_1', customer_id: 'cus_1', protocol: 'teltonika', fix_time: t, received_at: receivedAt, valid, lat: at.lat, lng: at.lng,
      speed_kmh: 30, heading_deg: 0, altitude_m: null, satellites: 9, ignition: true, odometer_m: null, attributes: {},
    },
  };
}

function setup() {
  const rm = readModelDb([tenantsProjection, devicesProjection, geofencesProjection]);
  rm.apply(registered);
  const crossings = (e: DomainEvent, id?: string) => rm.apply(e, id).map((d) => d.event.data as DeviceEventRaised['data']);
  return { ...rm, crossings };
}

describe('geofence crossings', () => {
  it('enters a polygon once, stays silent inside, exits with the dwell time', () => {
    const { apply, crossings } = setup();
    apply(geofence('geo_a', DEPOT));
    expect(crossings(fix(T0, OUTSIDE))).toEqual([]);
    const [enter, ...more] = crossings(fix(T0 + MIN, INSIDE), 'fix-2');
    expect(more).toEqual([]);
    expect(enter).toMatchObject({
      kind: 'geofence.enter', customer_id: 'cus_1', device_id: 'dev_1', driver_id: 'drv_1', occurred_at: T0 + MIN, severity: 'info',
      source: 'server', fields: { geofence_id: 'geo_a', geofence_name: 'fence geo_a' },
      position: { lat: 56.95, lng: 24.1, speed_kmh: 30, heading_deg: 0, timestamp: T0 + MIN },
    });
    expect(enter!.fields).not.toHaveProperty('dwell_s');
    expect(crossings(fix(T0 + 2 * MIN, { lat: 56.951, lng: 24.101 }))).toEqual([]);
    const [exit] = crossings(fix(T0 + 7 * MIN + 400, OUTSIDE));
    expect(exit).toMatchObject({ kind: 'geofence.exit', occurred_at: T0 + 7 * MIN + 400, fields: { geofence_id: 'geo_a', dwell_s: 360 } });
  });

  it('handles a circle stored as its polygon: 400 m from the centre is in, 600 m is out', () => {
    const { apply, crossings } = setup();
    const center = { lat: 56.95, lng: 24.1 };
    apply(geofence('geo_c', circlePolygon(center, 500), { shape: 'circle', center, radius_m: 500 }));
    const north = (m: number) => ({ lat: center.lat + m / 111_195, lng: center.lng });
    expect(crossings(fix(T0, north(600)))).toEqual([]);
    expect(crossings(fix(T0 + MIN, north(400))).map((c) => c.kind)).toEqual(['geofence.enter']);
    expect(crossings(fix(T0 + 3 * MIN, north(600)))).toMatchObject([{ kind: 'geofence.exit', fields: { geofence_id: 'geo_c', dwell_s: 120 } }]);
  });

  it('counts a fix exactly on the boundary as inside, as Turf\'s booleanPointInPolygon does', () => {
    const { apply, crossings } = setup();
    apply(geofence('geo_a', DEPOT));
    // On the north edge, and on the east edge: whichever side a crossing test would lean to.
    expect(crossings(fix(T0, { lat: 56.955, lng: 24.1 })).map((c) => c.kind)).toEqual(['geofence.enter']);
    expect(crossings(fix(T0 + MIN, { lat: 56.95, lng: 24.11 }))).toEqual([]);
    expect(crossings(fix(T0 + 2 * MIN, { lat: 56.955 + 1e-9, lng: 24.1 })).map((c) => c.kind)).toEqual(['geofence.exit']);
  });

  it('a fix dated years ahead changes no set, so the real fixes after it still cross', () => {
    const { apply, crossings } = setup();
    apply(geofence('geo_a', DEPOT));
    expect(crossings(fix(T0, OUTSIDE))).toEqual([]);
    expect(crossings(fix(Date.UTC(2030, 0, 1), INSIDE, true, T0 + 30_000))).toEqual([]);
    expect(crossings(fix(T0 + MIN, INSIDE)).map((c) => [c.kind, c.occurred_at])).toEqual([['geofence.enter', T0 + MIN]]);
  });

  it('crossing from one geofence into another gives the exit first, then the enter', () => {
    const { apply, crossings } = setup();
    apply(geofence('geo_a', DEPOT));
    apply(geofence('geo_b', circlePolygon(OUTSIDE, 300)));
    crossings(fix(T0, INSIDE));
    expect(crossings(fix(T0 + MIN, OUTSIDE)).map((c) => `${c.kind} ${c.fields.geofence_id}`)).toEqual([
      'geofence.exit geo_a',
      'geofence.enter geo_b',
    ]);
  });

  it('a late fix (older than the last processed one) creates no phantom crossing', () => {
    const { apply, crossings } = setup();
    apply(geofence('geo_a', DEPOT));
    expect(crossings(fix(T0 + 10 * MIN, INSIDE))).toHaveLength(1);
    // Buffered fixes from before arrive after the live one: outside, inside again.
    expect(crossings(fix(T0 + 5 * MIN, OUTSIDE))).toEqual([]);
    expect(crossings(fix(T0 + 10 * MIN, OUTSIDE))).toEqual([]);
    expect(crossings(fix(T0 + 11 * MIN, INSIDE))).toEqual([]);
    // Invalid fixes do not count either.
    expect(crossings(fix(T0 + 12 * MIN, OUTSIDE, false))).toEqual([]);
    expect(crossings(fix(T0 + 13 * MIN, OUTSIDE))).toMatchObject([{ kind: 'geofence.exit', fields: { dwell_s: 180 } }]);
  });

  it('a deleted geofence leaves device sets silently and raises nothing afterwards', () => {
    const { apply, crossings, db } = setup();
    apply(geofence('geo_a', DEPOT));
    apply(geofence('geo_b', circlePolygon(INSIDE, 200)));
    expect(crossings(fix(T0, INSIDE))).toHaveLength(2);
    apply({ type: 'GeofenceDeleted', data: { geofence_id: 'geo_a', customer_id: 'cus_1', deleted_at: T0 + MIN } });
    expect(db.prepare('SELECT geofence_id FROM geofences').pluck().all()).toEqual(['geo_b']);
    expect(crossings(fix(T0 + 2 * MIN, OUTSIDE)).map((c) => c.fields.geofence_id)).toEqual(['geo_b']);
    expect(crossings(fix(T0 + 3 * MIN, INSIDE)).map((c) => c.fields.geofence_id)).toEqual(['geo_b']);
  });

  it('ignores other customers\' geofences', () => {
    const { apply, crossings } = setup();
    apply({ ...geofence('geo_x', DEPOT), data: { ...(geofence('geo_x', DEPOT).data as GeofenceCreated['data']), customer_id: 'cus_2' } } as DomainEvent);
    expect(crossings(fix(T0, INSIDE))).toEqual([]);
  });

  it('a replay derives the same event ids, so the store appends nothing new', () => {
    const run = () => {
      const { apply } = setup();
      apply(geofence('geo_a', DEPOT));
      return [
        ...apply(fix(T0, INSIDE), 'e1'),
        ...apply(fix(T0 + MIN, OUTSIDE), 'e2'),
      ].map((d) => [d.stream, d.event.id, (d.event.data as DeviceEventRaised['data']).event_id]);
    };
    const first = run();
    expect(first).toHaveLength(2);
    expect(first[0]![0]).toBe('events-dev_1');
    expect(run()).toEqual(first);
  });

  it('survives a restart: presence is read back from the table', () => {
    const { apply, db } = setup();
    apply(geofence('geo_a', DEPOT));
    apply(fix(T0, INSIDE));
    // A fresh handler over the same tables (as after a process restart) still knows the device is inside.
    const handler = geofencesProjection.prepare(db);
    const derived = handler({
      ...(fix(T0 + MIN, OUTSIDE) as DomainEvent), id: 'x', stream: 't', revision: 0n, position: { commit: 99n, prepare: 99n }, metadata: {}, created: 0,
    } as never);
    expect((derived ?? []).map((d) => d.event.data)).toMatchObject([{ kind: 'geofence.exit', fields: { dwell_s: 60 } }]);
  });
});

describe('geofence dwell', () => {
  const dwells = (raised: DeviceEventRaised['data'][]) => raised.filter((e) => e.kind === 'geofence.dwell');

  it('raises geofence.dwell once per visit, at the first fix past the threshold, and again on the next visit', () => {
    const { apply, crossings } = setup();
    apply(geofence('geo_a', DEPOT, { dwell_s: 300 }));
    const raised: DeviceEventRaised['data'][] = [];
    // In at T0, fixes every two minutes: 4 min inside is short of 5, 6 min reaches it, 8 and 10 min raise nothing more.
    for (const m of [0, 2, 4, 6, 8, 10]) raised.push(...crossings(fix(T0 + m * MIN, INSIDE), `in-${m}`));
    raised.push(...crossings(fix(T0 + 12 * MIN, OUTSIDE), 'out'));
    for (const m of [14, 16, 20]) raised.push(...crossings(fix(T0 + m * MIN, INSIDE), `again-${m}`));
    expect(raised.map((e) => [e.kind, e.occurred_at - T0])).toEqual([
      ['geofence.enter', 0],
      ['geofence.dwell', 6 * MIN],
      ['geofence.exit', 12 * MIN],
      ['geofence.enter', 14 * MIN],
      ['geofence.dwell', 20 * MIN],
    ]);
    expect(dwells(raised)[0]).toMatchObject({
      severity: 'info', source: 'server', driver_id: 'drv_1', fields: { geofence_id: 'geo_a', geofence_name: 'fence geo_a', dwell_s: 360 },
      context: { rule: 'geofence_dwell', entered_at: T0, dwell_threshold_s: 300, fix_event_id: 'in-6' },
      position: { lat: INSIDE.lat, lng: INSIDE.lng, timestamp: T0 + 6 * MIN },
    });
  });

  it('takes its ids from the device, the geofence and the visit start: a replay raises the same event', () => {
    const run = (visitStart: number) => {
      const { apply } = setup();
      apply(geofence('geo_a', DEPOT, { dwell_s: 120 }));
      return [0, 1, 2, 3]
        .flatMap((m) => apply(fix(visitStart + m * MIN, INSIDE), `fix-${m}`))
        .filter((d) => (d.event.data as DeviceEventRaised['data']).kind === 'geofence.dwell')
        .map((d) => [d.stream, d.event.id, (d.event.data as DeviceEventRaised['data']).event_id]);
    };
    const first = run(T0);
    expect(first).toHaveLength(1);
    expect(run(T0)).toEqual(first);
    // Another visit (here: one starting a minute later) is another event.
    expect(run(T0 + MIN)[0]![1]).not.toBe(first[0]![1]);
  });

  it('follows the threshold as it is set, lowered and cleared, and forgets a geofence deleted during the visit', () => {
    const { apply, crossings } = setup();
    apply(geofence('geo_a', DEPOT));
    apply(geofence('geo_b', DEPOT, { dwell_s: 600 }));
    const at = (m: number) => dwells(crossings(fix(T0 + m * MIN, INSIDE))).map((e) => e.fields.geofence_id);
    expect(at(0)).toEqual([]);
    expect(at(5)).toEqual([]);
    // geo_a had none; set to 2 minutes now that the device has been in for 5, it is raised at the next fix.
    apply({ type: 'GeofenceUpdated', data: { geofence_id: 'geo_a', customer_id: 'cus_1', dwell_s: 120, updated_at: T0 + 5 * MIN } });
    apply({ type: 'GeofenceUpdated', data: { geofence_id: 'geo_b', customer_id: 'cus_1', dwell_s: null, updated_at: T0 + 5 * MIN } });
    expect(at(6)).toEqual(['geo_a']);
    expect(at(11)).toEqual([]);
    apply({ type: 'GeofenceDeleted', data: { geofence_id: 'geo_a', customer_id: 'cus_1', deleted_at: T0 + 12 * MIN } });
    expect(at(13)).toEqual([]);
  });

  it('keeps what a visit raised across a restart: the presence row holds it', () => {
    const { apply, db } = setup();
    apply(geofence('geo_a', DEPOT, { dwell_s: 60 }));
    apply(fix(T0, INSIDE));
    expect(dwells(apply(fix(T0 + MIN, INSIDE)).map((d) => d.event.data as DeviceEventRaised['data']))).toHaveLength(1);
    const handler = geofencesProjection.prepare(db);
    const derived = handler({
      ...(fix(T0 + 2 * MIN, INSIDE) as DomainEvent), id: 'y', stream: 't', revision: 0n, position: { commit: 99n, prepare: 99n }, metadata: {}, created: 0,
    } as never);
    expect(derived ?? []).toEqual([]);
  });
});

describe('GeofenceIndex', () => {
  // Brute force: every geofence, Turf's test (behind a plain box check, which cannot change the answer, only the time).
  const boxOf = (c: number[][][]) => {
    const xs = c[0]!.map((p) => p[0]!);
    const ys = c[0]!.map((p) => p[1]!);
    return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)] as const;
  };
  const boxes = new WeakMap<number[][][], readonly [number, number, number, number]>();
  const turfContaining = (geofences: Array<{ id: string; coordinates: number[][][] }>, p: { lat: number; lng: number }) =>
    geofences
      .filter((g) => {
        let b = boxes.get(g.coordinates);
        if (!b) boxes.set(g.coordinates, (b = boxOf(g.coordinates)));
        return p.lng >= b[0] && p.lng <= b[2] && p.lat >= b[1] && p.lat <= b[3];
      })
      .filter((g) => booleanPointInPolygon([p.lng, p.lat], { type: 'Polygon', coordinates: g.coordinates }))
      .map((g) => g.id)
      .sort();

  // A donut (a hole) and a concave "C", the shapes a disc or a box would get wrong.
  const special = [
    {
      id: 'geo_donut', name: 'donut',
      coordinates: [
        [[24.0, 56.9], [24.2, 56.9], [24.2, 57.0], [24.0, 57.0], [24.0, 56.9]],
        [[24.05, 56.93], [24.05, 56.97], [24.15, 56.97], [24.15, 56.93], [24.05, 56.93]],
      ],
    },
    {
      id: 'geo_c', name: 'C',
      coordinates: [[[24.0, 56.85], [24.3, 56.85], [24.3, 56.88], [24.05, 56.88], [24.05, 57.02], [24.3, 57.02], [24.3, 57.05], [24.0, 57.05], [24.0, 56.85]]],
    },
  ];

  it('finds exactly what a brute-force Turf scan finds, on random points', () => {
    const rand = mulberry32(7);
    const geofences = [...randomGeofences(2000, rand), ...special];
    const index = new GeofenceIndex(geofences.map((g) => compileFence(g.id, g.name, g.coordinates)));
    let hits = 0;
    for (let i = 0; i < 20_000; i++) {
      const p = randomPoint(rand);
      const expected = turfContaining(geofences, p);
      hits += expected.length;
      expect(index.containing(p.lat, p.lng).sort()).toEqual(expected);
    }
    expect(hits).toBeGreaterThan(20_000); // the points really land in geofences
  });

  it('agrees with Turf for a large polygon (1000 vertices, many raster cells)', () => {
    const rand = mulberry32(11);
    const ring: number[][] = [];
    for (let i = 0; i < 1000; i++) {
      const a = (i / 1000) * 2 * Math.PI;
      const r = 0.05 + 0.04 * rand();
      ring.push([24.1 + r * Math.cos(a), 56.95 + r * 0.6 * Math.sin(a)]);
    }
    ring.push([...ring[0]!]);
    const g = { id: 'geo_big', name: 'big', coordinates: [ring] };
    const f = compileFence(g.id, g.name, g.coordinates);
    for (let i = 0; i < 20_000; i++) {
      const p = { lat: 56.95 + (rand() * 2 - 1) * 0.06, lng: 24.1 + (rand() * 2 - 1) * 0.1 };
      expect(fenceContains(f, p.lat, p.lng)).toBe(booleanPointInPolygon([p.lng, p.lat], { type: 'Polygon', coordinates: g.coordinates }));
    }
  });

  it('stays exact while geofences are added and removed between lazy rebuilds', () => {
    const rand = mulberry32(3);
    const pool = randomGeofences(300, rand);
    const live = new Map<string, (typeof pool)[number]>();
    const set = new CustomerFences();
    for (let step = 0; step < 600; step++) {
      const g = pool[Math.floor(rand() * pool.length)]!;
      if (live.has(g.id)) {
        live.delete(g.id);
        set.remove(g.id);
      } else {
        live.set(g.id, g);
        set.add(compileFence(g.id, g.name, g.coordinates));
      }
      for (let k = 0; k < 5; k++) {
        const p = randomPoint(rand);
        expect(set.containing(p.lat, p.lng).sort()).toEqual(turfContaining([...live.values()], p));
      }
    }
  });
});
