/** Driver and geofence commands as given / when / then. */
import { describe, expect, it } from 'vitest';
import { STALE_CLAIM_MS } from '../../../core/commands/claims.js';
import { createDriver, externalIdStream, requireDriver } from '../../../core/commands/drivers.js';
import { createGeofence, deleteGeofence, updateGeofence, type GeofenceShape } from '../../../core/commands/geofences.js';
import type { DomainEvent } from '../../../core/events.js';
import { streams } from '../../../core/streams.js';
import { T0, given } from '../../support/given-when-then.js';

const driverCreated = (driverId: string, customerId = 'cus_a', externalId: string | null = null): DomainEvent => ({
  type: 'DriverCreated',
  data: { driver_id: driverId, customer_id: customerId, name: 'Ann', external_id: externalId, created_at: T0 },
});
const externalIdClaimed = (driverId: string, claimedAt = T0): DomainEvent => ({
  type: 'DriverExternalIdClaimed',
  data: { customer_id: 'cus_a', driver_id: driverId, external_id: 'E-7', claimed_at: claimedAt },
});

describe('createDriver', () => {
  it('claims the external id inside the customer, then creates the driver', async () => {
    const then = await given().when((store, clock) => createDriver(store, clock, { customer_id: 'cus_a', name: 'Ann', external_id: 'E-7' }));
    const driverId = then.result!.driver_id;
    expect(then.appended).toEqual({
      [externalIdStream('cus_a', 'E-7')]: [externalIdClaimed(driverId)],
      [streams.driver(driverId)]: [driverCreated(driverId, 'cus_a', 'E-7')],
    });
  });

  it('claims nothing without an external id', async () => {
    const then = await given().when((store, clock) => createDriver(store, clock, { customer_id: 'cus_a', name: 'Ann' }));
    expect(then.appended).toEqual({ [streams.driver(then.result!.driver_id)]: [driverCreated(then.result!.driver_id)] });
  });

  it("refuses an external id the customer's driver has, and writes nothing", async () => {
    const then = await given({
      [externalIdStream('cus_a', 'E-7')]: [externalIdClaimed('drv_1')],
      [streams.driver('drv_1')]: [driverCreated('drv_1', 'cus_a', 'E-7')],
    }, { now: T0 + 10 * STALE_CLAIM_MS }).when((store, clock) => createDriver(store, clock, { customer_id: 'cus_a', name: 'Bob', external_id: 'E-7' }));
    expect(then.refused()).toMatchObject({ kind: 'conflict', code: 'external_id_taken', field: '/external_id' });
    expect(then.appended).toEqual({});
  });

  it('takes over the external id of a driver that was never created, once stale', async () => {
    const now = T0 + STALE_CLAIM_MS;
    const then = await given({ [externalIdStream('cus_a', 'E-7')]: [externalIdClaimed('drv_ghost')] }, { now }).when((store, clock) =>
      createDriver(store, clock, { customer_id: 'cus_a', name: 'Bob', external_id: 'E-7' }),
    );
    expect(then.appended[externalIdStream('cus_a', 'E-7')]).toEqual([externalIdClaimed(then.result!.driver_id, now)]);
  });

  it("lets another customer use the same external id", async () => {
    const then = await given({ [externalIdStream('cus_a', 'E-7')]: [externalIdClaimed('drv_1')] }).when((store, clock) =>
      createDriver(store, clock, { customer_id: 'cus_b', name: 'Bob', external_id: 'E-7' }),
    );
    expect(Object.keys(then.appended)).toEqual([externalIdStream('cus_b', 'E-7'), streams.driver(then.result!.driver_id)]);
  });

  it("requireDriver accepts the customer's driver and refuses an unknown or another customer's one", async () => {
    const then = await given({ [streams.driver('drv_1')]: [driverCreated('drv_1')] }).when(async (store) => {
      await requireDriver(store, 'cus_a', 'drv_1', '/driver_id');
      return requireDriver(store, 'cus_b', 'drv_1', '/x');
    });
    expect(then.refused()).toMatchObject({ kind: 'invalid', code: 'validation_failed', field: '/x' });
  });
});

const square: GeofenceShape = {
  shape: 'polygon',
  geometry: { type: 'Polygon', coordinates: [[[24, 56], [24.1, 56], [24.1, 56.1], [24, 56.1], [24, 56]]] },
  center: null,
  radius_m: null,
};
const geofenceCreated: DomainEvent = { type: 'GeofenceCreated', data: { geofence_id: 'geo_1', customer_id: 'cus_a', name: 'Depot', ...square, created_at: T0 } };

describe('geofence commands', () => {
  it('creates a geofence from its checked shape', async () => {
    const then = await given().when((store, clock) => createGeofence(store, clock, { customer_id: 'cus_a', name: 'Depot', shape: square }));
    const id = then.result!.geofence_id;
    expect(then.appended).toEqual({
      [streams.geofence(id)]: [{ type: 'GeofenceCreated', data: { geofence_id: id, customer_id: 'cus_a', name: 'Depot', ...square, dwell_s: null, created_at: T0 } }],
    });
  });

  it('sets and clears the dwell threshold; the same value again appends nothing', async () => {
    const set = await given({ [streams.geofence('geo_1')]: [geofenceCreated] }).when((store, clock) =>
      updateGeofence(store, clock, { customer_id: 'cus_a', geofence_id: 'geo_1', dwell_s: 600 }),
    );
    const updated: DomainEvent = { type: 'GeofenceUpdated', data: { geofence_id: 'geo_1', customer_id: 'cus_a', dwell_s: 600, updated_at: T0 } };
    expect(set.appended).toEqual({ [streams.geofence('geo_1')]: [updated] });
    const again = await given({ [streams.geofence('geo_1')]: [geofenceCreated, updated] }).when((store, clock) =>
      updateGeofence(store, clock, { customer_id: 'cus_a', geofence_id: 'geo_1', dwell_s: 600 }),
    );
    expect(again.result).toBeNull();
    expect(again.appended).toEqual({});
    const cleared = await given({ [streams.geofence('geo_1')]: [geofenceCreated, updated] }).when((store, clock) =>
      updateGeofence(store, clock, { customer_id: 'cus_a', geofence_id: 'geo_1', dwell_s: null }),
    );
    expect(cleared.appended[streams.geofence('geo_1')]).toMatchObject([{ type: 'GeofenceUpdated', data: { dwell_s: null } }]);
    const foreign = await given({ [streams.geofence('geo_1')]: [geofenceCreated] }).when((store, clock) =>
      updateGeofence(store, clock, { customer_id: 'cus_b', geofence_id: 'geo_1', dwell_s: 600 }),
    );
    expect(foreign.refused()).toMatchObject({ kind: 'not_found', code: 'not_found' });
  });

  it('deletes a geofence of the customer', async () => {
    const then = await given({ [streams.geofence('geo_1')]: [geofenceCreated] }).when((store, clock) => deleteGeofence(store, clock, { customer_id: 'cus_a', geofence_id: 'geo_1' }));
    expect(then.appended).toEqual({ [streams.geofence('geo_1')]: [{ type: 'GeofenceDeleted', data: { geofence_id: 'geo_1', customer_id: 'cus_a', deleted_at: T0 } }] });
  });

  it("treats a deleted, an unknown or another customer's geofence as not found", async () => {
    const deleted: DomainEvent = { type: 'GeofenceDeleted', data: { geofence_id: 'geo_1', customer_id: 'cus_a', deleted_at: T0 } };
    for (const [history, customerId] of [
      [{ [streams.geofence('geo_1')]: [geofenceCreated, deleted] }, 'cus_a'],
      [{}, 'cus_a'],
      [{ [streams.geofence('geo_1')]: [geofenceCreated] }, 'cus_b'],
    ] as const) {
      const then = await given(history).when((store, clock) => deleteGeofence(store, clock, { customer_id: customerId, geofence_id: 'geo_1' }));
      expect(then.refused()).toMatchObject({ kind: 'not_found', code: 'not_found' });
      expect(then.appended).toEqual({});
    }
  });

  it('two deletes at once: one is written, the other is not found', async () => {
    const then = await given({ [streams.geofence('geo_1')]: [geofenceCreated] }).when((store, clock) =>
      Promise.allSettled([0, 1].map(() => deleteGeofence(store, clock, { customer_id: 'cus_a', geofence_id: 'geo_1' }))),
    );
    expect(then.result!.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(then.result!.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'not_found' } });
    expect(then.appended[streams.geofence('geo_1')]).toHaveLength(1);
  });
});
