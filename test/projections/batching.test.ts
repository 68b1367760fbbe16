/**
 * Projections keep hot rows in memory for a batch and write them at its end
 * (projections/batch-rows.ts). Whether a log is applied one event per batch or
 * all of it in one batch, the read models and the derived events must be the
 * same, also when a device's driver and speed limit change in the middle of a
 * batch; and a batch that fails leaves nothing of what it kept.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../core/events.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { randomUuid } from '../../core/ids.js';
import { silentLogger } from '../../core/logger.js';
import { streams } from '../../core/streams.js';
import { readModelProjections } from '../../projections/index.js';
import type { Projection } from '../../projections/projection.js';
import { ProjectionRunner, openReadModelDb } from '../../projections/runner.js';
import { readModelDb } from '../support/read-model-db.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-batching-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const C = 'cus_batch';
const T0 = Date.UTC(2026, 0, 5, 8, 0, 0);
const DEVICES = ['dev_a', 'dev_b', 'dev_c'];

/** Two drivers, three devices, a geofence; fixes interleaved across devices with hard braking, speeding and crossings; a driver and a limit changed halfway. */
function story(): Array<{ stream: string; event: DomainEvent }> {
  const out: Array<{ stream: string; event: DomainEvent }> = [];
  const add = (stream: string, event: DomainEvent) => out.push({ stream, event });
  add(streams.tenant(C), { type: 'CustomerCreated', data: { customer_id: C, name: 'Batch', plan: 'pro', speed_limit_kmh: 90, created_at: T0 } });
  for (const d of ['drv_1', 'drv_2']) {
    add(`driver-${d}`, { type: 'DriverCreated', data: { driver_id: d, customer_id: C, name: d, external_id: null, created_at: T0 } });
  }
  add('geofence-geo_1', {
    type: 'GeofenceCreated',
    data: {
      geofence_id: 'geo_1', customer_id: C, name: 'Depot', shape: 'polygon',
      geometry: { type: 'Polygon', coordinates: [[[24.0, 56.0], [24.01, 56.0], [24.01, 56.01], [24.0, 56.01], [24.0, 56.0]]] },
      center: null, radius_m: null, created_at: T0,
    },
  });
  DEVICES.forEach((device_id, i) => {
    add(streams.device(device_id), {
      type: 'DeviceRegistered',
      data: {
        device_id, customer_id: C, imei: `35209809000000${i}`, model: 'FMB920', name: null, group_id: null,
        driver_id: i === 2 ? null : 'drv_1', terminal_id: null, created_at: T0,
      },
    });
  });
  for (let k = 0; k < 120; k++) {
    if (k === 60) {
      add(streams.device('dev_a'), { type: 'DeviceUpdated', data: { device_id: 'dev_a', customer_id: C, changes: { driver_id: 'drv_2', speed_limit_kmh: 50 }, updated_at: T0 } });
      add(streams.device('dev_c'), { type: 'DeviceUpdated', data: { device_id: 'dev_c', customer_id: C, changes: { driver_id: 'drv_1' }, updated_at: T0 } });
    }
    DEVICES.forEach((device_id, i) => {
      const t = T0 + 60_000 + k * 5_000;
      // In and out of the depot every 20 fixes; speeds swing hard every 7th fix and exceed the limits now and then.
      const inside = Math.floor(k / 20) % 2 === 0;
      const speed = k % 7 === 0 ? 10 : 60 + ((k * 13 + i * 7) % 50);
      add(streams.telemetry(device_id), {
        type: 'PositionRecorded',
        data: {
          device_id, customer_id: C, protocol: 'teltonika', fix_time: t, received_at: t + 500, valid: true,
          lat: inside ? 56.005 : 56.02 + k * 0.0001, lng: 24.005 + i * 0.0001, speed_kmh: speed, heading_deg: (k * 10) % 360,
          altitude_m: 20, satellites: 9, ignition: true, odometer_m: k * 100, attributes: {},
        },
      });
    });
  }
  return out;
}

const TABLES = ['devices', 'latest_positions', 'safety_detector_state', 'geofence_presence', 'score_fixes', 'driver_days'];

function dump(db: ReturnType<typeof openReadModelDb>): Record<string, unknown[]> {
  return Object.fromEntries(TABLES.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all()]));
}

describe('projection batches', () => {
  it('build the same read models and derive the same events one event per batch as in a single batch', async () => {
    const events = story();
    const ids = events.map(() => randomUuid());

    // One event per batch (the test support applies and flushes each event on its own).
    const single = readModelDb(readModelProjections());
    const derivedOne = events.flatMap((e, i) => single.apply(e.event, ids[i]).map((d) => ({ stream: d.stream, id: d.event.id })));

    // All of it in one batch, through the runner.
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    for (const [i, e] of events.entries()) await store.appendToStream(e.stream, [{ ...e.event, id: ids[i]! }]);
    const db = openReadModelDb(join(dir, 'readmodels.sqlite'));
    const runner = new ProjectionRunner(store, db, readModelProjections(), silentLogger);
    await runner.catchUp();
    const derivedBatch = (await store.readAll({ maxCount: 100_000 })).filter((e) => e.type === 'DeviceEventRaised').map((e) => ({ stream: e.stream, id: e.id }));
    await store.close();

    expect(derivedOne.length).toBeGreaterThan(5);
    // The same events, each stream's in the order raised (the outbox appends streams together, so not across them).
    const byStream = (derived: Array<{ stream: string; id: string }>) => {
      const streams = new Map<string, string[]>();
      for (const d of derived) streams.set(d.stream, [...(streams.get(d.stream) ?? []), d.id]);
      return Object.fromEntries([...streams].sort(([a], [b]) => (a < b ? -1 : 1)));
    };
    expect(byStream(derivedBatch)).toEqual(byStream(derivedOne));
    expect(new Set(derivedOne.map((d) => d.stream)).size).toBeGreaterThan(1);
    expect(dump(db)).toEqual(dump(single.db));
    db.close();
  });

  it('leave nothing of a batch that fails: neither its rows nor its checkpoint', async () => {
    const failing: Projection = {
      name: 'failing',
      migrate: () => undefined,
      prepare: () => (e) => {
        if (e.type === 'PositionRecorded' && e.data.fix_time > T0 + 60_000 + 100 * 5_000) throw new Error('boom');
      },
    };
    const store = new SqliteEventStore(join(dir, 'events-fail.sqlite'));
    for (const e of story()) await store.appendToStream(e.stream, [{ ...e.event, id: randomUuid() }]);
    const path = join(dir, 'readmodels-fail.sqlite');
    const db = openReadModelDb(path);
    const runner = new ProjectionRunner(store, db, [...readModelProjections(), failing], silentLogger);
    await expect(runner.catchUp()).rejects.toThrow('boom');
    expect(runner.position).toBeNull();
    for (const t of ['latest_positions', 'safety_detector_state', 'geofence_presence', 'devices']) {
      expect(db.prepare(`SELECT count(*) FROM ${t}`).pluck().get(), t).toBe(0);
    }
    // Without the failing projection, the same database builds the same read models as a fresh one.
    const again = new ProjectionRunner(store, db, readModelProjections(), silentLogger);
    await again.catchUp();
    const fresh = openReadModelDb(join(dir, 'readmodels-fresh.sqlite'));
    await new ProjectionRunner(store, fresh, readModelProjections(), silentLogger).catchUp();
    expect(dump(db)).toEqual(dump(fresh));
    await store.close();
    db.close();
    fresh.close();
  });
});
