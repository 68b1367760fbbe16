import { describe, expect, it } from 'vitest';
import { STALE_CLAIM_MS } from '../../../core/commands/claims.js';
import { createDriver } from '../../../core/commands/drivers.js';
import { registerDevice, updateDevice } from '../../../core/commands/devices.js';
import { randomUuid } from '../../../core/ids.js';
import { imeiFrom } from '../../../core/imei.js';
import { streams } from '../../../core/streams.js';
import { rejection, useCommandStore } from '../../support/command-store.js';

const open = useCommandStore();
const IMEIS = ['35630704244101', '49015420323751', '35209900176148', '35404305181276', '35693803564380'].map(imeiFrom);

describe('registerDevice', () => {
  it('claims the IMEI and terminal number and registers the device', async () => {
    const { store, clock } = open();
    const { device_id } = await registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEIS[0]!, model: 'JC450', terminal_id: '013912345678' });
    const [registered] = await store.readStream(streams.device(device_id));
    expect(registered).toMatchObject({ type: 'DeviceRegistered', data: { customer_id: 'cus_a', imei: IMEIS[0], terminal_id: '13912345678' } });
    expect((await store.readStream(streams.imei(IMEIS[0]!)))[0]).toMatchObject({ type: 'ImeiClaimed', data: { device_id } });
    expect((await store.readStream(streams.terminal('13912345678')))[0]).toMatchObject({ type: 'TerminalClaimed', data: { device_id } });
  });

  it('refuses an IMEI with a wrong Luhn digit, naming the field', async () => {
    const { store, clock } = open();
    const err = await rejection(registerDevice(store, clock, { customer_id: 'cus_a', imei: `${IMEIS[0]!.slice(0, 14)}${(Number(IMEIS[0]!.at(-1)) + 1) % 10}`, model: 'FMB920' }));
    expect(err).toMatchObject({ kind: 'invalid', field: '/imei' });
  });

  it('refuses an IMEI registered by any customer', async () => {
    const { store, clock } = open();
    await registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEIS[0]!, model: 'FMB920' });
    const err = await rejection(registerDevice(store, clock, { customer_id: 'cus_b', imei: IMEIS[0]!, model: 'FMB920' }));
    expect(err).toMatchObject({ kind: 'conflict', code: 'imei_taken' });
  });

  it('releases the IMEI when the terminal number is taken, so the IMEI can be registered afterwards', async () => {
    const { store, clock } = open();
    await registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEIS[0]!, model: 'JC450', terminal_id: '13912345678' });
    const err = await rejection(registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEIS[1]!, model: 'JC450', terminal_id: '13912345678' }));
    expect(err).toMatchObject({ kind: 'conflict', code: 'terminal_taken' });
    expect((await store.readStream(streams.imei(IMEIS[1]!))).map((e) => e.type)).toEqual(['ImeiClaimed', 'ImeiReleased']);
    await registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEIS[1]!, model: 'JC450' });
  });

  it('lets exactly one of concurrent registrations of a terminal win, and every losing IMEI stays free', async () => {
    const { store, clock } = open();
    const results = await Promise.allSettled(
      IMEIS.map((imei) => registerDevice(store, clock, { customer_id: 'cus_a', imei, model: 'JC450', terminal_id: '13900000001' })),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'terminal_taken' });
    const winner = IMEIS[results.findIndex((r) => r.status === 'fulfilled')];
    for (const imei of IMEIS.filter((i) => i !== winner)) await registerDevice(store, clock, { customer_id: 'cus_a', imei, model: 'JC450' });
  });

  it('takes over a claim whose device was never registered once it is stale, not before', async () => {
    const { store, clock } = open();
    // A registration that died between its claim and its device.
    await store.appendToStream(streams.imei(IMEIS[2]!), [
      { id: randomUuid(), type: 'ImeiClaimed', data: { device_id: 'dev_dead', customer_id: 'cus_a', imei: IMEIS[2]!, model: 'x', terminal_id: null, claimed_at: clock.now() } },
    ]);
    await rejection(registerDevice(store, clock, { customer_id: 'cus_b', imei: IMEIS[2]!, model: 'FMB920' }));
    clock.advance(STALE_CLAIM_MS);
    const { device_id } = await registerDevice(store, clock, { customer_id: 'cus_b', imei: IMEIS[2]!, model: 'FMB920' });
    expect((await store.readStream(streams.imei(IMEIS[2]!))).at(-1)).toMatchObject({ type: 'ImeiClaimed', data: { device_id } });
  });

  it("refuses another customer's driver as unknown", async () => {
    const { store, clock } = open();
    const { driver_id } = await createDriver(store, clock, { customer_id: 'cus_b', name: 'Ann' });
    const err = await rejection(registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEIS[0]!, model: 'FMB920', driver_id }));
    expect(err).toMatchObject({ kind: 'invalid', field: '/driver_id' });
    expect(await store.readStream(streams.imei(IMEIS[0]!))).toEqual([]);
  });
});

describe('updateDevice', () => {
  it('writes only the fields that change, and nothing for an edit that changes nothing', async () => {
    const { store, clock } = open();
    const { device_id } = await registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEIS[0]!, model: 'FMB920', name: 'Van 1' });
    expect(await updateDevice(store, clock, { customer_id: 'cus_a', device_id, changes: { name: 'Van 1' } })).toBeNull();
    expect(await updateDevice(store, clock, { customer_id: 'cus_a', device_id, changes: { name: 'Van 2', group_id: null } })).not.toBeNull();
    const events = await store.readStream(streams.device(device_id));
    expect(events.map((e) => e.type)).toEqual(['DeviceRegistered', 'DeviceUpdated']);
    expect(events[1]).toMatchObject({ data: { changes: { name: 'Van 2' } } });
    expect(await updateDevice(store, clock, { customer_id: 'cus_a', device_id, changes: { name: 'Van 2' } })).toBeNull();
  });

  it("treats another customer's device as not found", async () => {
    const { store, clock } = open();
    const { device_id } = await registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEIS[0]!, model: 'FMB920' });
    const err = await rejection(updateDevice(store, clock, { customer_id: 'cus_b', device_id, changes: { name: 'Mine' } }));
    expect(err).toMatchObject({ kind: 'not_found' });
  });
});
