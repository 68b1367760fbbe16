import { describe, expect, it } from 'vitest';
import { createGeofence, deleteGeofence, type GeofenceShape } from '../../../core/commands/geofences.js';
import { streams } from '../../../core/streams.js';
import { rejection, useCommandStore } from '../../support/command-store.js';

const open = useCommandStore();
const square: GeofenceShape = {
  shape: 'polygon',
  geometry: { type: 'Polygon', coordinates: [[[24, 56], [24.1, 56], [24.1, 56.1], [24, 56.1], [24, 56]]] },
  center: null,
  radius_m: null,
};

describe('geofence commands', () => {
  it('creates a geofence and deletes it once; a second delete is not found', async () => {
    const { store, clock } = open();
    const { geofence_id } = await createGeofence(store, clock, { customer_id: 'cus_a', name: 'Depot', shape: square });
    await deleteGeofence(store, clock, { customer_id: 'cus_a', geofence_id });
    expect((await store.readStream(streams.geofence(geofence_id))).map((e) => e.type)).toEqual(['GeofenceCreated', 'GeofenceDeleted']);
    expect(await rejection(deleteGeofence(store, clock, { customer_id: 'cus_a', geofence_id }))).toMatchObject({ kind: 'not_found' });
  });

  it("treats another customer's geofence as not found, and deletes nothing", async () => {
    const { store, clock } = open();
    const { geofence_id } = await createGeofence(store, clock, { customer_id: 'cus_a', name: 'Depot', shape: square });
    expect(await rejection(deleteGeofence(store, clock, { customer_id: 'cus_b', geofence_id }))).toMatchObject({ kind: 'not_found' });
    expect(await store.readStream(streams.geofence(geofence_id))).toHaveLength(1);
  });
});
