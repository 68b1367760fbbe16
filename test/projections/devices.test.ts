/** Fleet stories for the device and latest-position read models. */
import { describe, expect, it } from 'vitest';
import type { DeviceRegistered, DomainEvent, PositionRecorded } from '../../core/events.js';
import { evolveDevice, type DeviceRow } from '../../projections/devices/evolve.js';
import { evolveLatestPosition } from '../../projections/latest-positions/evolve.js';

const registered: DomainEvent = {
  type: 'DeviceRegistered',
  data: {
    device_id: 'dev_1', customer_id: 'cus_1', imei: '356938035643809', model: 'FMB920', name: 'Van',
    group_id: null, driver_id: null, terminal_id: null, created_at: 1000,
  },
};
const connected = (connection_id: string, at: number): DomainEvent => ({
  type: 'DeviceConnected',
  data: { device_id: 'dev_1', customer_id: 'cus_1', connection_id, protocol: 'teltonika', remote_address: 'x', at },
});
const disconnected = (connection_id: string, at: number): DomainEvent => ({
  type: 'DeviceDisconnected',
  data: { device_id: 'dev_1', customer_id: 'cus_1', connection_id, reason: 'closed', last_seen_at: at - 5, at },
});

type DeviceRegisteredData = DeviceRegistered['data'];

function fold(events: DomainEvent[]): DeviceRow | null {
  return events.reduce<DeviceRow | null>((row, e) => evolveDevice(row, e), null);
}

describe('device status', () => {
  it('starts never_connected, goes online on connect and offline on disconnect', () => {
    expect(fold([registered])!.status).toBe('never_connected');
    expect(fold([registered, connected('c1', 2000)])).toMatchObject({ status: 'online', last_seen_at: 2000, protocol: 'teltonika' });
    expect(fold([registered, connected('c1', 2000), disconnected('c1', 3000)])).toMatchObject({ status: 'offline', last_seen_at: 2995 });
  });

  it('a stale connection closing after the device redialled does not make it offline', () => {
    const row = fold([registered, connected('c1', 2000), connected('c2', 2500), disconnected('c1', 3000)]);
    expect(row!.status).toBe('online');
  });

  it('shows the protocol fixed at registration before the first connection', () => {
    const withProtocol: DomainEvent = { type: 'DeviceRegistered', data: { ...(registered.data as DeviceRegisteredData), protocol: 'jt808' } };
    expect(fold([withProtocol])).toMatchObject({ status: 'never_connected', protocol: 'jt808' });
    expect(fold([registered])!.protocol).toBeNull();
  });

  it('leaves the row as it is for the login records the gateway keeps in the device stream', () => {
    const online = fold([registered, connected('c1', 2000)])!;
    const kept: DomainEvent[] = [
      { type: 'TerminalAuthCodeIssued', data: { device_id: 'dev_1', customer_id: 'cus_1', auth_code_sha256: 'ab'.repeat(32), issued_at: 2100 } },
      { type: 'DeviceProtocolBound', data: { device_id: 'dev_1', customer_id: 'cus_1', protocol: 'teltonika', bound_at: 2100 } },
      {
        type: 'DeviceLoginRefused',
        data: {
          device_id: 'dev_1', customer_id: 'cus_1', reason: 'protocol_mismatch', protocol: 'gt06', bound_protocol: 'teltonika',
          remote_address: 'y', at: 2200, count: 1,
        },
      },
      {
        type: 'DeviceConnectionReplaced',
        data: {
          device_id: 'dev_1', customer_id: 'cus_1', previous_connection_id: 'c1', connection_id: 'c2', previous_remote_address: 'x',
          remote_address: 'y', protocol: 'teltonika', replaced_at: 2300, count: 1,
        },
      },
    ];
    for (const e of kept) expect(evolveDevice(online, e)).toBe(online);
  });

  it('ignores events of devices it never saw registered', () => {
    expect(fold([connected('c1', 2000)])).toBeNull();
  });
});

describe('latest position', () => {
  const fix = (fix_time: number, valid = true, lat = 56.9): PositionRecorded => ({
    type: 'PositionRecorded',
    data: {
      device_id: 'dev_1', customer_id: 'cus_1', protocol: 'gt06', fix_time, received_at: fix_time + 100, valid, lat, lng: 24.1,
      speed_kmh: 40, heading_deg: 90, altitude_m: null, satellites: 9, ignition: true, odometer_m: null, attributes: {},
    },
  });

  it('keeps the newest valid fix; a late, older fix does not move it back', () => {
    const t = Date.UTC(2026, 10, 20, 8);
    const a = evolveLatestPosition(null, fix(t + 2000, true, 1));
    const b = evolveLatestPosition(a, fix(t + 1000, true, 2));
    expect(b!.lat).toBe(1);
    const c = evolveLatestPosition(b, fix(t + 3000, false, 3));
    expect(c!.lat).toBe(1);
    const d = evolveLatestPosition(c, fix(t + 4000, true, 4));
    expect(d).toMatchObject({ lat: 4, fix_time: t + 4000, ignition: 1 });
  });

  it('is not taken from a fix dated years ahead of its receipt, and the next real fix still replaces it', () => {
    const real = evolveLatestPosition(null, fix(Date.UTC(2026, 10, 20, 8), true, 1));
    const year2030 = fix(Date.UTC(2030, 0, 1), true, 2);
    year2030.data.received_at = Date.UTC(2026, 10, 20, 8, 1);
    expect(evolveLatestPosition(real, year2030)).toBe(real);
    expect(evolveLatestPosition(real, fix(Date.UTC(2026, 10, 20, 8, 2), true, 3))).toMatchObject({ lat: 3 });
  });

  it('a device\'s last contact is when the gateway received its frame, not the time the frame claims', () => {
    const year2030 = fix(Date.UTC(2030, 0, 1), true, 2);
    year2030.data.received_at = 5000;
    expect(fold([registered, year2030])!.last_seen_at).toBe(5000);
  });

  it('a report moves last_seen_at and leaves every other field as it was, and an older report changes nothing', () => {
    const before: DeviceRow = {
      device_id: 'dev_1', customer_id: 'cus_1', imei: '356938035643809', model: 'FMB920', name: 'Van', group_id: 'grp_1',
      driver_id: 'drv_1', terminal_id: 'term_1', speed_limit_kmh: 90, command_texts: null, status: 'online', protocol: 'teltonika',
      connection_id: 'c1', last_seen_at: 2000, created_at: 1000, updated_at: 1500,
    };
    const report = fix(Date.UTC(2026, 10, 20, 8), true, 2);
    report.data.received_at = 6000;
    expect(evolveDevice(before, report)).toEqual({ ...before, last_seen_at: 6000 });
    report.data.received_at = 1500;
    expect(evolveDevice(before, report)).toBe(before);
  });
});
