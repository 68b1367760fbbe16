/** Device commands as given / when / then: the claims and device events they append, or their refusals. */
import { describe, expect, it } from 'vitest';
import { STALE_CLAIM_MS } from '../../../core/commands/claims.js';
import { registerDevice, updateDevice } from '../../../core/commands/devices.js';
import type { DeviceClaim, DomainEvent } from '../../../core/events.js';
import { imeiFrom } from '../../../core/imei.js';
import { streams } from '../../../core/streams.js';
import { T0, given } from '../../support/given-when-then.js';

const IMEI = imeiFrom('35630704244101');
const OTHER_IMEI = imeiFrom('49015420323751');
const TERMINAL = '13912345678';

function claim(deviceId: string, extra: Partial<DeviceClaim> = {}): DeviceClaim {
  return { device_id: deviceId, customer_id: 'cus_a', imei: IMEI, model: 'JC450', terminal_id: null, protocol: null, claimed_at: T0, ...extra };
}

function registered(deviceId: string, customerId = 'cus_a'): DomainEvent {
  return {
    type: 'DeviceRegistered',
    data: { device_id: deviceId, customer_id: customerId, imei: IMEI, model: 'FMB920', name: 'Van 1', group_id: null, driver_id: null, terminal_id: null, speed_limit_kmh: null, protocol: null, created_at: T0 },
  };
}

const driverCreated = (driverId: string, customerId: string): DomainEvent => ({
  type: 'DriverCreated',
  data: { driver_id: driverId, customer_id: customerId, name: 'Ann', external_id: null, created_at: T0 },
});

describe('registerDevice', () => {
  it('claims the IMEI and the terminal number, then registers the device', async () => {
    const then = await given().when((store, clock) =>
      registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEI, model: 'JC450', terminal_id: '0' + TERMINAL, protocol: 'jt808' }),
    );
    const deviceId = then.result!.device_id;
    const claimed = claim(deviceId, { terminal_id: TERMINAL, protocol: 'jt808' });
    expect(then.appended).toEqual({
      [streams.imei(IMEI)]: [{ type: 'ImeiClaimed', data: claimed }],
      [streams.terminal(TERMINAL)]: [{ type: 'TerminalClaimed', data: claimed }],
      [streams.device(deviceId)]: [
        {
          type: 'DeviceRegistered',
          data: { device_id: deviceId, customer_id: 'cus_a', imei: IMEI, model: 'JC450', name: null, group_id: null, driver_id: null, terminal_id: TERMINAL, speed_limit_kmh: null, protocol: 'jt808', created_at: T0 },
        },
      ],
    });
  });

  it('refuses an IMEI with a wrong check digit before claiming anything', async () => {
    const then = await given().when((store, clock) => registerDevice(store, clock, { customer_id: 'cus_a', imei: `${IMEI.slice(0, 14)}${(Number(IMEI.at(-1)) + 1) % 10}`, model: 'x' }));
    expect(then.refused()).toMatchObject({ kind: 'invalid', code: 'validation_failed', field: '/imei' });
    expect(then.appended).toEqual({});
  });

  it("refuses an IMEI another customer's device holds", async () => {
    const then = await given({
      [streams.imei(IMEI)]: [{ type: 'ImeiClaimed', data: claim('dev_1', { customer_id: 'cus_b' }) }],
      [streams.device('dev_1')]: [registered('dev_1', 'cus_b')],
    }).when((store, clock) => registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEI, model: 'x' }));
    expect(then.refused()).toMatchObject({ kind: 'conflict', code: 'imei_taken', field: '/imei' });
    expect(then.appended).toEqual({});
  });

  it('refuses an IMEI claimed moments ago by a registration still under way', async () => {
    const then = await given({ [streams.imei(IMEI)]: [{ type: 'ImeiClaimed', data: claim('dev_pending') }] }, { now: T0 + STALE_CLAIM_MS - 1 }).when(
      (store, clock) => registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEI, model: 'x' }),
    );
    expect(then.refused()).toMatchObject({ code: 'imei_taken' });
    expect(then.appended).toEqual({});
  });

  it('takes over a stale claim whose device was never registered', async () => {
    const now = T0 + STALE_CLAIM_MS;
    const then = await given({ [streams.imei(IMEI)]: [{ type: 'ImeiClaimed', data: claim('dev_dead') }] }, { now }).when((store, clock) =>
      registerDevice(store, clock, { customer_id: 'cus_b', imei: IMEI, model: 'FMB920' }),
    );
    const deviceId = then.result!.device_id;
    expect(then.appended[streams.imei(IMEI)]).toEqual([
      { type: 'ImeiClaimed', data: claim(deviceId, { customer_id: 'cus_b', model: 'FMB920', claimed_at: now }) },
    ]);
    expect(then.appended[streams.device(deviceId)]).toMatchObject([{ type: 'DeviceRegistered', data: { customer_id: 'cus_b', created_at: now } }]);
  });

  it('keeps an old claim whose device exists', async () => {
    const then = await given(
      { [streams.imei(IMEI)]: [{ type: 'ImeiClaimed', data: claim('dev_1') }], [streams.device('dev_1')]: [registered('dev_1')] },
      { now: T0 + 10 * STALE_CLAIM_MS },
    ).when((store, clock) => registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEI, model: 'x' }));
    expect(then.refused()).toMatchObject({ code: 'imei_taken' });
  });

  it('claims a released IMEI again', async () => {
    const then = await given({
      [streams.imei(IMEI)]: [
        { type: 'ImeiClaimed', data: claim('dev_gave_up') },
        { type: 'ImeiReleased', data: { device_id: 'dev_gave_up', imei: IMEI, released_at: T0 } },
      ],
    }).when((store, clock) => registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEI, model: 'JC450' }));
    expect(then.appended[streams.imei(IMEI)]).toEqual([{ type: 'ImeiClaimed', data: claim(then.result!.device_id) }]);
  });

  it('releases the IMEI it claimed when the terminal number is taken', async () => {
    const then = await given({
      [streams.terminal(TERMINAL)]: [{ type: 'TerminalClaimed', data: claim('dev_1', { imei: OTHER_IMEI, terminal_id: TERMINAL }) }],
      [streams.device('dev_1')]: [registered('dev_1')],
    }).when((store, clock) => registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEI, model: 'JC450', terminal_id: TERMINAL }));
    expect(then.refused()).toMatchObject({ kind: 'conflict', code: 'terminal_taken', field: '/terminal_id' });
    const [claimed] = then.appended[streams.imei(IMEI)]!;
    const deviceId = (claimed!.data as DeviceClaim).device_id;
    expect(then.appended).toEqual({
      [streams.imei(IMEI)]: [
        { type: 'ImeiClaimed', data: claim(deviceId, { terminal_id: TERMINAL }) },
        { type: 'ImeiReleased', data: { device_id: deviceId, imei: IMEI, released_at: T0 } },
      ],
    });
  });

  it("refuses an unknown driver, or another customer's, before claiming anything", async () => {
    for (const history of [{}, { [streams.driver('drv_1')]: [driverCreated('drv_1', 'cus_b')] }]) {
      const then = await given(history).when((store, clock) => registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEI, model: 'x', driver_id: 'drv_1' }));
      expect(then.refused()).toMatchObject({ kind: 'invalid', code: 'validation_failed', field: '/driver_id' });
      expect(then.appended).toEqual({});
    }
  });

  it("registers with the customer's own driver", async () => {
    const then = await given({ [streams.driver('drv_1')]: [driverCreated('drv_1', 'cus_a')] }).when((store, clock) =>
      registerDevice(store, clock, { customer_id: 'cus_a', imei: IMEI, model: 'x', driver_id: 'drv_1' }),
    );
    expect(then.appended[streams.device(then.result!.device_id)]).toMatchObject([{ type: 'DeviceRegistered', data: { driver_id: 'drv_1' } }]);
  });
});

describe('updateDevice', () => {
  const device = { [streams.device('dev_1')]: [registered('dev_1')] };

  it('writes only the fields that change', async () => {
    const then = await given(device).when((store, clock) =>
      updateDevice(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', changes: { name: 'Van 2', group_id: null, speed_limit_kmh: 90 } }),
    );
    expect(then.result).not.toBeNull();
    expect(then.appended).toEqual({
      [streams.device('dev_1')]: [{ type: 'DeviceUpdated', data: { device_id: 'dev_1', customer_id: 'cus_a', changes: { name: 'Van 2', speed_limit_kmh: 90 }, updated_at: T0 } }],
    });
  });

  it('writes nothing for an edit that changes nothing, counting earlier edits and ignoring connectivity', async () => {
    const then = await given({
      [streams.device('dev_1')]: [
        registered('dev_1'),
        { type: 'DeviceUpdated', data: { device_id: 'dev_1', customer_id: 'cus_a', changes: { name: 'Van 2' }, updated_at: T0 } },
        { type: 'DeviceDisconnected', data: { device_id: 'dev_1', customer_id: 'cus_a', connection_id: 'c1', reason: 'closed', last_seen_at: T0, at: T0 } },
      ],
    }).when((store, clock) => updateDevice(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', changes: { name: 'Van 2', group_id: null } }));
    expect(then.result).toBeNull();
    expect(then.appended).toEqual({});
  });

  it("treats another customer's or an unknown device as not found, whatever driver it names", async () => {
    for (const input of [
      { customer_id: 'cus_b', device_id: 'dev_1', changes: { name: 'Mine' } },
      { customer_id: 'cus_a', device_id: 'dev_nope', changes: { driver_id: 'drv_nope' } },
    ]) {
      const then = await given(device).when((store, clock) => updateDevice(store, clock, input));
      expect(then.refused()).toMatchObject({ kind: 'not_found', code: 'not_found' });
      expect(then.appended).toEqual({});
    }
  });

  it('refuses a driver the customer does not have', async () => {
    const then = await given(device).when((store, clock) => updateDevice(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', changes: { driver_id: 'drv_nope' } }));
    expect(then.refused()).toMatchObject({ kind: 'invalid', field: '/driver_id' });
    expect(then.appended).toEqual({});
  });

  it('decides again on the newer stream when the gateway appended to it first', async () => {
    const then = await given(device).when(async (store, clock) => {
      const [edit] = await Promise.all([
        updateDevice(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', changes: { name: 'Van 3' } }),
        store.appendToStream(streams.device('dev_1'), [{ id: 'bound', type: 'DeviceProtocolBound', data: { device_id: 'dev_1', customer_id: 'cus_a', protocol: 'gt06', bound_at: T0 } }]),
      ]);
      return edit;
    });
    expect(then.appended[streams.device('dev_1')]!.map((e) => e.type)).toEqual(['DeviceProtocolBound', 'DeviceUpdated']);
  });
});
