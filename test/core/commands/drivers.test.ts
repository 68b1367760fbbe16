import { describe, expect, it } from 'vitest';
import { createDriver, requireDriver } from '../../../core/commands/drivers.js';
import { streams } from '../../../core/streams.js';
import { rejection, useCommandStore } from '../../support/command-store.js';

const open = useCommandStore();

describe('createDriver', () => {
  it('creates a driver', async () => {
    const { store, clock } = open();
    const { driver_id } = await createDriver(store, clock, { customer_id: 'cus_a', name: 'Ann', external_id: 'E-1' });
    expect((await store.readStream(streams.driver(driver_id)))[0]).toMatchObject({ type: 'DriverCreated', data: { name: 'Ann', external_id: 'E-1' } });
  });

  it('keeps an external_id unique inside a customer, also when creations race, and free across customers', async () => {
    const { store, clock } = open();
    const results = await Promise.allSettled([1, 2, 3, 4].map((n) => createDriver(store, clock, { customer_id: 'cus_a', name: `D${n}`, external_id: 'E-7' })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const err = await rejection(createDriver(store, clock, { customer_id: 'cus_a', name: 'Again', external_id: 'E-7' }));
    expect(err).toMatchObject({ kind: 'conflict', code: 'external_id_taken', field: '/external_id' });
    await createDriver(store, clock, { customer_id: 'cus_b', name: 'Other', external_id: 'E-7' });
  });

  it('needs no external_id, and drivers without one never conflict', async () => {
    const { store, clock } = open();
    await createDriver(store, clock, { customer_id: 'cus_a', name: 'A' });
    await createDriver(store, clock, { customer_id: 'cus_a', name: 'B', external_id: null });
  });
});

describe('requireDriver', () => {
  it("accepts the customer's driver and refuses an unknown or another customer's one", async () => {
    const { store, clock } = open();
    const { driver_id } = await createDriver(store, clock, { customer_id: 'cus_a', name: 'Ann' });
    await requireDriver(store, 'cus_a', driver_id, '/driver_id');
    expect(await rejection(requireDriver(store, 'cus_b', driver_id, '/driver_id'))).toMatchObject({ kind: 'invalid', field: '/driver_id' });
    expect(await rejection(requireDriver(store, 'cus_a', 'drv_nope', '/driver_id'))).toMatchObject({ kind: 'invalid' });
  });
});
