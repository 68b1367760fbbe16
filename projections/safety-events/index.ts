/**
 * Safety events: every device-reported alarm, and harsh braking,
 * acceleration, cornering and overspeed detected from the fixes, raised as
 * `DeviceEventRaised` through the runner's outbox. The rules are pure
 * (detect.ts); this file only looks up the device's driver and speed limit,
 * loads and saves the per-device state, and hands back what was raised.
 */
import type Database from 'better-sqlite3';
import { batchHandler, type Projection } from '../projection.js';
import { BatchLookup } from '../batch-rows.js';
import { deviceContextLookup } from '../speed-limit.js';
import { detect, type DetectorEvent } from './detect.js';
import { initialState } from './state.js';
import { detectorStateStore, migrateDetectorState } from './store.js';

export { detect, type DetectorEnv, type DetectorEvent } from './detect.js';
export { initialState, type DetectorState } from './state.js';
export { THRESHOLDS } from './thresholds.js';

export const safetyEventsProjection: Projection = {
  name: 'safety-events',
  migrate(db) {
    migrateDetectorState(db);
  },
  prepare(db: Database.Database) {
    const states = detectorStateStore(db);
    // Driver and speed limit as the read models have them, read once and remembered until an event may change them.
    const context = new BatchLookup(deviceContextLookup(db));
    return batchHandler(
      (e) => {
        context.seen(e.type);
        if (e.type !== 'PositionRecorded' && e.type !== 'AlarmReported' && e.type !== 'StatusReported' && e.type !== 'DeviceDisconnected') {
          return;
        }
        const { device_id: deviceId, customer_id: customerId } = e.data;
        const before = states.get(deviceId);
        // Status reports and disconnects only matter to a device the detector already follows.
        if (!before && (e.type === 'StatusReported' || e.type === 'DeviceDisconnected')) return;
        const { driverId, limitKmh } = context.get(deviceId);
        const env = { driverId, limitKmh: e.type === 'PositionRecorded' || e.type === 'AlarmReported' ? limitKmh : null };
        const result = detect(before ?? initialState(), e as DetectorEvent, env);
        states.put(deviceId, customerId, result.state);
        return result.raised;
      },
      {
        flush() {
          states.flush();
          context.flush();
        },
        discard() {
          states.discard();
          context.discard();
        },
      },
    );
  },
};
