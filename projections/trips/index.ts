/**
 * Trips, stops, idling and accumulators, projected from the log. Fixes in
 * fix-time order are folded one by one (fold.ts, accumulate.ts); a late fix
 * (a unit's buffered records sent after newer ones) is stored between its
 * neighbours, taking their accumulator readings and driver, and the device
 * is folded again from the last trip that started before it, so the rows
 * equal those of an in-order arrival. Closed trips and idles raise their
 * events (raise.ts). Only usable fixes count (usable-fix.ts).
 * Each device's fold and accumulators are kept in memory for the batch and
 * written at its end (batch-rows.ts); the rows it cuts are written at once.
 */
import type Database from 'better-sqlite3';
import type { AccumulatorsSet, PositionRecorded, TripRulesSet } from '../../core/events.js';
import { DEFAULT_TRIP_RULES, type TripRules } from '../../core/trip-rules.js';
import { BatchLookup, BatchRows } from '../batch-rows.js';
import { dayOf } from '../driver-scores/days.js';
import { FIX_RETENTION_MS } from '../driver-scores/index.js';
import { batchHandler, type DerivedEvent, type Projection } from '../projection.js';
import { deviceContextLookup } from '../speed-limit.js';
import { isUsableFix } from '../usable-fix.js';
import { accumulate, engineCounterOf, INITIAL_ACCUMULATORS, readAccumulators, setAccumulators, type AccumulatorState } from './accumulate.js';
import { foldFix, INITIAL_TRIP_STATE, stateBeforeTrip, type TripFix, type TripFoldState } from './fold.js';
import { raisedBy } from './raise.js';
import { migrateTripTables, tripStatements, type TripStatements } from './tables.js';

interface DeviceTrips {
  customer_id: string;
  fold: TripFoldState;
  accumulators: AccumulatorState;
}

export const tripsProjection: Projection = {
  name: 'trips',
  migrate: migrateTripTables,
  prepare(db: Database.Database) {
    const q = tripStatements(db);
    const context = new BatchLookup(deviceContextLookup(db));
    const rulesOf = new BatchLookup((customerId): TripRules => {
      const stored = q.rules.get(customerId) as string | undefined;
      return stored ? (JSON.parse(stored) as TripRules) : DEFAULT_TRIP_RULES;
    });
    const devices = new BatchRows<string, DeviceTrips>(
      (deviceId) => {
        const row = q.loadDevice.get(deviceId) as { customer_id: string; fold: string; accumulators: string } | undefined;
        return row ? { customer_id: row.customer_id, fold: JSON.parse(row.fold), accumulators: JSON.parse(row.accumulators) } : null;
      },
      (deviceId, d) => {
        const read = readAccumulators(d.accumulators);
        q.saveDevice.run(deviceId, d.customer_id, JSON.stringify(d.fold), JSON.stringify(d.accumulators), read.odometer_m, read.engine_ms);
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

    const onFix = (p: PositionRecorded['data']): DerivedEvent[] => {
      const raised: DerivedEvent[] = [];
      if (!isUsableFix(p)) return raised;
      const d = devices.get(p.device_id) ?? { customer_id: p.customer_id, fold: INITIAL_TRIP_STATE, accumulators: INITIAL_ACCUMULATORS };
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
          ignition: p.ignition,
          odometer_m: near?.odometer_m ?? 0,
          engine_s: near?.engine_s ?? 0,
          driver_id: near?.driver_id ?? null,
        };
        q.insertTripFix(p.device_id, late);
        devices.set(p.device_id, { ...d, fold: refold(p.device_id, d, p.fix_time, raised) });
        return raised;
      }
      const accumulators = accumulate(d.accumulators, {
        t: p.fix_time,
        lat: p.lat,
        lng: p.lng,
        speed_kmh: p.speed_kmh,
        ignition: p.ignition,
        odometer_m: p.odometer_m,
        engine_s: engineCounterOf(p.attributes),
      });
      const read = readAccumulators(accumulators);
      const fix: TripFix = {
        t: p.fix_time,
        lat: p.lat,
        lng: p.lng,
        speed_kmh: p.speed_kmh,
        ignition: p.ignition,
        odometer_m: read.odometer_m,
        engine_s: read.engine_ms / 1000,
        driver_id: context.get(p.device_id).driverId,
      };
      q.insertTripFix(p.device_id, fix);
      const step = foldFix(d.fold, fix, rulesOf.get(d.customer_id));
      write(p.device_id, d.customer_id, step.writes, raised);
      devices.set(p.device_id, { customer_id: d.customer_id, fold: step.state, accumulators });
      // Once a day per device, forget fixes too old to be spliced into.
      if (lastT !== null && dayOf(lastT) !== dayOf(fix.t)) q.pruneFixes.run(p.device_id, fix.t - FIX_RETENTION_MS);
      return raised;
    };

    const onAccumulatorsSet = (a: AccumulatorsSet['data']) => {
      const d = devices.get(a.device_id) ?? { customer_id: a.customer_id, fold: INITIAL_TRIP_STATE, accumulators: INITIAL_ACCUMULATORS };
      devices.set(a.device_id, { ...d, accumulators: setAccumulators(d.accumulators, a) });
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
        if (e.type === 'AccumulatorsSet') onAccumulatorsSet(e.data);
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
