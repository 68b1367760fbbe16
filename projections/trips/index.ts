/**
 * Trips, stops, idling and accumulators, projected from the log. Fixes in
 * fix-time order are folded one by one (fold.ts, accumulate.ts); a late fix
 * (a unit's buffered records sent after newer ones) is stored between its
 * neighbours, taking their accumulator readings and driver, and the device
 * is folded again from the last trip that started before it, so the rows
 * equal those of an in-order arrival. Closed trips and idles raise their
 * events (raise.ts). Only usable fixes count (usable-fix.ts); a status record's
 * ignition (a GT06 heartbeat) is kept as the device's, for fixes that have none.
 * Each fix is tested against the customer's geofences when it is applied, and
 * trips, stops and idles carry those of the fixes they start and end at.
 * Each device's fold and accumulators are kept in memory for the batch and
 * written at its end (batch-rows.ts); the rows it cuts are written at once.
 */
import type Database from 'better-sqlite3';
import type { AccumulatorsSet, PositionRecorded, StatusReported, TripRulesSet } from '../../core/events.js';
import { DEFAULT_TRIP_RULES, type TripRules } from '../../core/trip-rules.js';
import { BatchLookup, BatchRows } from '../batch-rows.js';
import { FenceCache } from '../geofences/fence-cache.js';
import { dayOf } from '../driver-scores/days.js';
import { FIX_RETENTION_MS } from '../driver-scores/index.js';
import { batchHandler, type DerivedEvent, type Projection } from '../projection.js';
import { deviceContextLookup } from '../speed-limit.js';
import { believableTime, isUsableFix } from '../usable-fix.js';
import { accumulate, engineCounterOf, INITIAL_ACCUMULATORS, readAccumulators, setAccumulators, type AccumulatorState } from './accumulate.js';
import { foldFix, ignitionOf, INITIAL_TRIP_STATE, stateBeforeTrip, type ReportedIgnition, type TripFix, type TripFoldState } from './fold.js';
import { raisedBy } from './raise.js';
import { migrateTripTables, tripStatements, type TripStatements } from './tables.js';

interface DeviceTrips {
  customer_id: string;
  fold: TripFoldState;
  accumulators: AccumulatorState;
  /** The ignition its last status record reported (a GT06 heartbeat), for fixes without one. */
  ignition: ReportedIgnition | null;
}

/** The fields of a standing, key-off fix made from a status record (its place and time are added). */
const parkedFix = { valid: true, speed_kmh: 0, heading_deg: null, altitude_m: null, satellites: null, ignition: false, odometer_m: null, attributes: {} } as const;

export const tripsProjection: Projection = {
  name: 'trips',
  migrate: migrateTripTables,
  prepare(db: Database.Database) {
    const q = tripStatements(db);
    const context = new BatchLookup(deviceContextLookup(db));
    // Geofences as the log has them at each fix; the geofences projection (applied before this one) keeps their table.
    const fences = new FenceCache(db);
    const rulesOf = new BatchLookup((customerId): TripRules => {
      const stored = q.rules.get(customerId) as string | undefined;
      return stored ? (JSON.parse(stored) as TripRules) : DEFAULT_TRIP_RULES;
    });
    const devices = new BatchRows<string, DeviceTrips>(
      (deviceId) => {
        const row = q.loadDevice.get(deviceId) as { customer_id: string; fold: string; accumulators: string; ignition: string | null } | undefined;
        if (!row) return null;
        return { customer_id: row.customer_id, fold: JSON.parse(row.fold), accumulators: JSON.parse(row.accumulators), ignition: row.ignition === null ? null : JSON.parse(row.ignition) };
      },
      (deviceId, d) => {
        const read = readAccumulators(d.accumulators);
        const ignition = d.ignition === null ? null : JSON.stringify(d.ignition);
        q.saveDevice.run(deviceId, d.customer_id, JSON.stringify(d.fold), JSON.stringify(d.accumulators), read.odometer_m, read.engine_ms, ignition);
      },
    );

    /** Writes a step's rows and raises its events. */
    const write = (deviceId: string, customerId: string, writes: Parameters<TripStatements['apply']>[2], raised: DerivedEvent[]) => {
      q.apply(deviceId, customerId, writes);
      raised.push(...raisedBy(writes, customerId, deviceId));
    };

    /** Folds the device again from the last trip that started at or before `t`. */
    const refold = (deviceId: string, d: DeviceTrips, t: number, raised: DerivedEvent[]): TripFoldState => {
      const anchor = q.tripStartAtOrBefore.get(deviceId, t) as number | undefined;
      const from = anchor ?? 0;
      let state = anchor === undefined ? INITIAL_TRIP_STATE : stateBeforeTrip(q.stopBeforeTime(deviceId, anchor));
      q.deleteFromTime(deviceId, from);
      const rules = rulesOf.get(d.customer_id);
      for (const fix of q.fixesFromTime(deviceId, from)) {
        const step = foldFix(state, fix, rules);
        write(deviceId, d.customer_id, step.writes, raised);
        state = step.state;
      }
      return state;
    };

    const deviceOf = (e: { device_id: string; customer_id: string }): DeviceTrips =>
      devices.get(e.device_id) ?? { customer_id: e.customer_id, fold: INITIAL_TRIP_STATE, accumulators: INITIAL_ACCUMULATORS, ignition: null };

    const onFix = (p: PositionRecorded['data']): DerivedEvent[] => {
      const raised: DerivedEvent[] = [];
      if (!isUsableFix(p)) return raised;
      const d = deviceOf(p);
      const lastT = d.fold.last_t;
      if (lastT !== null && p.fix_time <= lastT) {
        // Two fixes with the same time: the first one stands.
        if (q.fixAt.get(p.device_id, p.fix_time)) return raised;
        const near = q.fixBeforeOrAfter(p.device_id, p.fix_time);
        const late: TripFix = {
          t: p.fix_time,
          lat: p.lat,
          lng: p.lng,
          speed_kmh: p.speed_kmh,
          // Without its own, the ignition its neighbour was folded with (a heartbeat's included).
          ignition: p.ignition ?? near?.ignition ?? null,
          odometer_m: near?.odometer_m ?? 0,
          engine_s: near?.engine_s ?? 0,
          driver_id: near?.driver_id ?? null,
          geofences: fences.containing(p.customer_id, p.lat, p.lng),
        };
        q.insertTripFix(p.device_id, late);
        devices.set(p.device_id, { ...d, fold: refold(p.device_id, d, p.fix_time, raised) });
        return raised;
      }
      const ignition = ignitionOf(p.ignition, p.fix_time, d.ignition);
      const accumulators = accumulate(d.accumulators, {
        t: p.fix_time,
        lat: p.lat,
        lng: p.lng,
        speed_kmh: p.speed_kmh,
        ignition,
        odometer_m: p.odometer_m,
        engine_s: engineCounterOf(p.attributes),
      });
      const read = readAccumulators(accumulators);
      const fix: TripFix = {
        t: p.fix_time,
        lat: p.lat,
        lng: p.lng,
        speed_kmh: p.speed_kmh,
        ignition,
        odometer_m: read.odometer_m,
        engine_s: read.engine_ms / 1000,
        driver_id: context.get(p.device_id).driverId,
        geofences: fences.containing(p.customer_id, p.lat, p.lng),
      };
      q.insertTripFix(p.device_id, fix);
      const step = foldFix(d.fold, fix, rulesOf.get(d.customer_id));
      write(p.device_id, d.customer_id, step.writes, raised);
      devices.set(p.device_id, { ...d, fold: step.state, accumulators });
      // Once a day per device, forget fixes too old to be spliced into.
      if (lastT !== null && dayOf(lastT) !== dayOf(fix.t)) q.pruneFixes.run(p.device_id, fix.t - FIX_RETENTION_MS);
      return raised;
    };

    const onAccumulatorsSet = (a: AccumulatorsSet['data']) => {
      const d = deviceOf(a);
      devices.set(a.device_id, { ...d, accumulators: setAccumulators(d.accumulators, a) });
    };

    /**
     * A status record's ignition becomes the device's; an older report than the one kept changes nothing.
     * Ignition off after the newest fix is also a fix where that one stood: a unit whose GPS sleeps with
     * the key off (GT06 heartbeats only) has its trip pause, and end, when the key turned.
     */
    const onStatus = (r: StatusReported['data']): DerivedEvent[] | undefined => {
      if (r.ignition === null) return undefined;
      const t = believableTime(r.at, r.received_at);
      const d = deviceOf(r);
      if (d.ignition && d.ignition.t > t) return undefined;
      devices.set(r.device_id, { ...d, ignition: { on: r.ignition, t } });
      const at = d.fold.anchor;
      if (r.ignition || !at || d.fold.last_t === null || t <= d.fold.last_t) return undefined;
      return onFix({ ...parkedFix, device_id: r.device_id, customer_id: r.customer_id, protocol: r.protocol, fix_time: t, received_at: r.received_at, lat: at.lat, lng: at.lng });
    };

    const onRulesSet = (r: TripRulesSet['data']) => {
      q.setRules.run(r.customer_id, JSON.stringify(r.rules));
      rulesOf.forget(r.customer_id);
    };

    return batchHandler(
      (e) => {
        context.seen(e.type);
        rulesOf.seen(e.type);
        if (e.type === 'PositionRecorded') return onFix(e.data);
        if (e.type === 'StatusReported') return onStatus(e.data);
        // Geofences in log order (a GeofenceUpdated sets a dwell threshold, which no trip names).
        else if (e.type === 'GeofenceCreated') fences.created(e.data);
        else if (e.type === 'GeofenceDeleted') fences.deleted(e.data.customer_id, e.data.geofence_id);
        else if (e.type === 'AccumulatorsSet') onAccumulatorsSet(e.data);
        else if (e.type === 'TripRulesSet') onRulesSet(e.data);
        return undefined;
      },
      {
        flush() {
          devices.flush();
          context.flush();
          rulesOf.flush();
        },
        discard() {
          devices.discard();
          context.discard();
          rulesOf.discard();
        },
      },
    );
  },
};
