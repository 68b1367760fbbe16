/**
 * One fix dated years ahead (a GPS clock gone wrong) amid a van's real fixes,
 * through every read-model projection: it stays in the history, and nothing
 * else takes it for the van's "now".
 */
import { describe, expect, it } from 'vitest';
import type { DeviceEventRaised, DomainEvent, PositionRecorded } from '../../core/events.js';
import { historyItemJson } from '../../api/history-item.js';
import { historyProjection, readModelProjections } from '../../projections/index.js';
import { MAX_AHEAD_OF_RECEIPT_MS, isUsableFix } from '../../projections/usable-fix.js';
import { historyRows } from '../support/history-rows.js';
import { readModelDb } from '../support/read-model-db.js';

const T0 = Date.UTC(2026, 10, 20, 8, 0, 0);
const YEAR_2030 = Date.UTC(2030, 0, 1, 3, 0, 0);
const S = 1000;
const LIMIT_KMH = 90;

// The depot: about 1.2 km x 1.1 km around (56.95, 24.10).
const DEPOT = {
  type: 'Polygon' as const,
  coordinates: [[[24.09, 56.945], [24.11, 56.945], [24.11, 56.955], [24.09, 56.955], [24.09, 56.945]]],
};

function fix(fixTime: number, receivedAt: number, lat: number, speed: number): DomainEvent {
  return {
    type: 'PositionRecorded',
    data: {
      device_id: 'dev_1', customer_id: 'cus_1', protocol: 'gt06', fix_time: fixTime, received_at: receivedAt, valid: true, lat, lng: 24.1,
      speed_kmh: speed, heading_deg: 180, altitude_m: null, satellites: 9, ignition: true, odometer_m: null, attributes: {},
    },
  };
}

/** A real fix: received 2 s after it was taken. */
const real = (s: number, lat: number, speed: number) => fix(T0 + s * S, T0 + s * S + 2 * S, lat, speed);

function fleet() {
  // The history beside the other read models in one database: what each derives from the same fixes.
  const rm = readModelDb([...readModelProjections(), historyProjection(historyItemJson)]);
  rm.apply({ type: 'CustomerCreated', data: { customer_id: 'cus_1', name: 'Acme', plan: 'pro', speed_limit_kmh: LIMIT_KMH, created_at: 0 } });
  rm.apply({ type: 'DriverCreated', data: { driver_id: 'drv_1', customer_id: 'cus_1', name: 'Anna', external_id: null, created_at: 0 } });
  rm.apply({
    type: 'DeviceRegistered',
    data: {
      device_id: 'dev_1', customer_id: 'cus_1', imei: '356938035643809', model: 'GT06N', name: 'Van', group_id: null,
      driver_id: 'drv_1', terminal_id: null, created_at: 0,
    },
  });
  rm.apply({
    type: 'GeofenceCreated',
    data: { geofence_id: 'geo_depot', customer_id: 'cus_1', name: 'Depot', shape: 'polygon', geometry: DEPOT, center: null, radius_m: null, created_at: 0 },
  });
  const raised: Array<DeviceEventRaised['data']> = [];
  const send = (e: DomainEvent) => raised.push(...rm.apply(e).map((d) => d.event.data as DeviceEventRaised['data']));
  return { ...rm, raised, send };
}

describe('a fix dated in the future', () => {
  it('is kept in the history but blinds neither the detectors, the geofences, the latest position nor the scores', () => {
    const { db, raised, send } = fleet();
    send(real(0, 56.975, 60));
    send(real(60, 56.965, 60));
    // Dated 2030, received between the two real fixes, and placed inside the depot.
    send(fix(YEAR_2030, T0 + 90 * S, 56.95, 0));
    expect(raised).toEqual([]);

    send(real(120, 56.952, 150)); // into the depot at 150 km/h against a 90 km/h limit
    for (const [i, v] of [150, 130, 110, 95].entries()) send(real(180 + i, 56.951 - i * 0.0003, v)); // braking at 20 km/h per s
    send(real(200, 56.946, 95));

    expect(raised.map((r) => [r.kind, r.occurred_at])).toEqual([
      ['geofence.enter', T0 + 120 * S],
      ['event.overspeed', T0 + 120 * S],
      ['event.harsh_brake', T0 + 180 * S],
    ]);
    expect(raised[1]!.fields).toEqual({ limit_kmh: LIMIT_KMH, delta_kmh: 150 - LIMIT_KMH });

    expect(db.prepare('SELECT fix_time, lat FROM latest_positions WHERE device_id = ?').get('dev_1')).toEqual({ fix_time: T0 + 200 * S, lat: 56.946 });
    expect(historyRows(db).filter((r) => r.device_id === 'dev_1').at(-1)?.fix_time).toBe(YEAR_2030);
    // The device's last contact is when the gateway received a frame, whatever the frame says.
    expect(db.prepare('SELECT last_seen_at FROM devices WHERE device_id = ?').pluck().get('dev_1')).toBe(T0 + 202 * S);
    // No score day in 2030; the real day's distance runs from fix to fix as if the 2030 fix had never come.
    expect(db.prepare('SELECT day FROM driver_days WHERE driver_id = ?').pluck().all('drv_1')).toEqual(['2026-11-20']);
  });

  it('an alarm from a clock years ahead is still raised, dated when it was received, its own time kept in the context', () => {
    const { db, raised, send } = fleet();
    send(real(0, 56.975, 60));
    send({
      type: 'AlarmReported',
      data: {
        device_id: 'dev_1', customer_id: 'cus_1', protocol: 'gt06', kind: 'event.sos', occurred_at: YEAR_2030, received_at: T0 + 30 * S,
        level: null, position: { lat: 56.97, lng: 24.1, speed_kmh: 40, heading_deg: 180 }, details: {},
      },
    });
    expect(raised).toHaveLength(1);
    expect(raised[0]).toMatchObject({
      kind: 'event.sos',
      occurred_at: T0 + 30 * S,
      position: { lat: 56.97, lng: 24.1, timestamp: T0 + 30 * S },
      context: { device_time: new Date(YEAR_2030).toISOString(), time_source: 'received_at' },
    });
    // Counted on the day it was received, not in 2030.
    send({ type: 'DeviceEventRaised', data: raised[0]! });
    expect(db.prepare('SELECT day, kind, count FROM driver_day_events WHERE driver_id = ?').all('drv_1')).toEqual([
      { day: '2026-11-20', kind: 'event.sos', count: 1 },
    ]);
  });

  it('is judged against its own receipt time, with a tolerance for clocks that disagree a little', () => {
    const at = (ahead: number) => (fix(T0 + ahead, T0, 56.95, 50) as PositionRecorded).data;
    expect(isUsableFix(at(0))).toBe(true);
    expect(isUsableFix(at(-86_400_000))).toBe(true); // a day old: buffered, late, but real
    expect(isUsableFix(at(MAX_AHEAD_OF_RECEIPT_MS))).toBe(true);
    expect(isUsableFix(at(MAX_AHEAD_OF_RECEIPT_MS + 1))).toBe(false);
    expect(isUsableFix({ ...at(0), valid: false })).toBe(false);
  });
});
