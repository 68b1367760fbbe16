/**
 * Impossible fixes in well-formed frames, over TCP into the running platform:
 * acknowledged and stored (marked invalid, with the reason), but never the
 * latest position, history, a geofence crossing, a detection or a score.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PositionRecorded } from '../../core/events.js';
import { imeiFrom } from '../../core/imei.js';
import type { ProtocolName } from '../../gateway/protocol.js';
import { checksumlessGpsPacket } from '../simulator/encoders/gt06.js';
import type { EncodeContext, SimPoint } from '../simulator/encoders/types.js';
import { encoders } from '../simulator/run.js';
import { login, replyOf, until } from '../support/device-login.js';
import { startPlatformHarness, type Json, type PlatformHarness } from '../support/platform-harness.js';
import { TcpClient } from '../support/tcp-client.js';

let p: PlatformHarness;
let fenceId: string;
const CENTRE = { lat: 56.95, lng: 24.1 };

beforeAll(async () => {
  p = await startPlatformHarness();
  const fence = await p.api('POST', '/v1/geofences', { name: 'Yard', center: CENTRE, radius_m: 1000 });
  expect(fence.status).toBe(201);
  fenceId = fence.json.id;
});
afterAll(async () => {
  await p.close();
});

/**
 * 08:00 UTC yesterday. A fixed time of day: a checksum-less GT06 0x10 frame ends at the first
 * 0D 0A, so a fix time whose bytes hold one (13:10 is 0D 0A) cannot be framed, by any server.
 */
const T0 = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 86_400_000 + 8 * 3_600_000;
const iso = (t: number) => new Date(t).toISOString();

function fix(t: number, lat: number, lng: number, speedKmh = 50): SimPoint {
  return { fixTime: t, lat, lng, speedKmh, headingDeg: 0, altitudeM: 10, satellites: 9, ignition: true, odometerM: 0 };
}

/** The impossible frame of each probe: how to build it from a point, and the reason it is stored with. */
interface Case {
  name: string;
  protocol: ProtocolName;
  seed: string;
  frame(ctx: EncodeContext, t: number): Buffer;
  /** The checksum-less 0x10 gets no reply: it has no serial to echo. */
  acked: boolean;
  reason: string;
}

const cases: Case[] = [
  {
    name: 'Teltonika lat 150 / lng 190 / 65,000 km/h',
    protocol: 'teltonika',
    seed: '35209807100001',
    frame: (ctx, t) => encoders.teltonika.encode([fix(t, 150, 190, 65_000)], ctx),
    acked: true,
    reason: 'latitude_out_of_range',
  },
  {
    name: 'Teltonika at the yard at 65,000 km/h',
    protocol: 'teltonika',
    seed: '35209807100002',
    frame: (ctx, t) => encoders.teltonika.encode([fix(t, CENTRE.lat, CENTRE.lng, 65_000)], ctx),
    acked: true,
    reason: 'speed_out_of_range',
  },
  {
    name: 'GT06 0x22 lat 500 / lng 700',
    protocol: 'gt06',
    seed: '35209807100003',
    frame: (ctx, t) => encoders.gt06.encode([fix(t, 500, 700)], ctx),
    acked: true,
    reason: 'latitude_out_of_range',
  },
  {
    name: 'JT/T 808 lat 500 / lng 700',
    protocol: 'jt808',
    seed: '35209807100004',
    frame: (ctx, t) => encoders.jt808.encode([fix(t, 500, 700)], ctx),
    acked: true,
    reason: 'latitude_out_of_range',
  },
  {
    name: 'GT06 0x10 without CRC, one bit of the latitude flipped',
    protocol: 'gt06',
    seed: '35209807100005',
    frame: (_ctx, t) => {
      const frame = checksumlessGpsPacket(fix(t, CENTRE.lat, CENTRE.lng));
      frame[4 + 7]! ^= 0x40; // bit 30 of the latitude: 56.95 becomes 653.5
      return frame;
    },
    acked: false,
    reason: 'latitude_out_of_range',
  },
];

describe.each(cases)('$name', (c) => {
  it('is acknowledged and stored as invalid, but is no position, history, event or score', async () => {
    const imei = imeiFrom(c.seed);
    const terminalId = c.protocol === 'jt808' ? c.seed.slice(3) : undefined;
    const driver = await p.api('POST', '/v1/drivers', { name: `Driver ${c.seed}` });
    expect(driver.status).toBe(201);
    const reg = await p.api('POST', '/v1/devices', {
      imei, model: 'test-unit', driver_id: driver.json.id, speed_limit_kmh: 60, ...(terminalId ? { terminal_id: terminalId } : {}),
    });
    expect(reg.status).toBe(201);
    const deviceId = reg.json.id as string;
    const encoder = encoders[c.protocol];
    const ctx: EncodeContext = { imei, terminalId: terminalId ?? '', serial: 1 };
    const client = await TcpClient.open(p.platform.ports[c.protocol]!);
    await login(client, encoder, ctx);
    const send = async (frame: Buffer, acked = true) => {
      ctx.serial += 1;
      client.send(frame);
      if (acked) expect(encoder.isAck(await client.receive(replyOf(encoder)), frame, 1)).toBe(true);
    };
    const next = (point: SimPoint) => encoder.encode([point], { ...ctx, serial: ctx.serial });

    // In the yard, the impossible fix, still in the yard, then 4.4 km north (out of the yard).
    await send(next(fix(T0, CENTRE.lat, CENTRE.lng)));
    await send(c.frame({ ...ctx }, T0 + 10_000), c.acked);
    await send(next(fix(T0 + 20_000, CENTRE.lat + 0.001, CENTRE.lng)));
    await send(next(fix(T0 + 300_000, CENTRE.lat + 0.04, CENTRE.lng)));
    client.close();

    // Stored, for forensics: invalid, with the reason.
    const stored = (await p.platform.store.readStream(`telemetry-${deviceId}`)).filter((e) => e.type === 'PositionRecorded') as unknown as Array<{ data: PositionRecorded['data'] }>;
    expect(stored.map((e) => e.data.fix_time)).toEqual([T0, T0 + 10_000, T0 + 20_000, T0 + 300_000]);
    expect(stored[1]!.data).toMatchObject({ valid: false, attributes: { implausible: c.reason } });
    expect(stored.filter((e) => !e.data.valid)).toHaveLength(1);

    // The yard exit at the last fix is derived after everything before it: wait for it.
    let events: Json[] = [];
    await until(async () => {
      events = (await p.api('GET', `/v1/events?device_id=${deviceId}&order=asc`)).json.data;
      return events.some((e: Json) => e.kind === 'geofence.exit');
    }, 20_000, 'geofence exit');
    expect(events.map((e: Json) => [e.kind, e.occurred_at])).toEqual([
      ['geofence.enter', iso(T0)],
      ['geofence.exit', iso(T0 + 300_000)],
    ]);
    expect(events[0]).toMatchObject({ geofence_id: fenceId });

    const latest = (await p.api('GET', `/v1/positions/latest?device_id=${deviceId}`)).json.data;
    expect(latest).toHaveLength(1);
    expect(latest[0]).toMatchObject({ timestamp: iso(T0 + 300_000) });
    expect(latest[0].lat).toBeCloseTo(CENTRE.lat + 0.04, 5);

    // The history has a runner of its own, which applies live fixes in batches up to a quarter second apart.
    let history: Json[] = [];
    await until(async () => {
      history = (await p.api('GET', `/v1/positions?device_id=${deviceId}&from=${iso(T0 - 1000)}&limit=100`)).json.data;
      return history.length >= 3;
    }, 20_000, 'fixes in the history');
    expect(history.map((h: Json) => h.timestamp)).toEqual([iso(T0), iso(T0 + 20_000), iso(T0 + 300_000)]);

    const day = (t: number) => iso(t).slice(0, 10);
    const score = await p.api('GET', `/v1/drivers/${driver.json.id}/score?from=${day(T0 - 86_400_000)}&to=${day(T0 + 2 * 86_400_000)}`);
    expect(score.status).toBe(200);
    const km = (score.json.data as Json[]).reduce((sum, d) => sum + d.distance_km, 0);
    expect(km).toBeGreaterThan(4);
    expect(km).toBeLessThan(5); // 4.45 km from the yard north; through the impossible fix it would be thousands
  });
});

describe('the same GT06 0x10 frame without the flipped bit', () => {
  it('is a real fix: in the history', async () => {
    const imei = imeiFrom('35209807100006');
    const reg = await p.api('POST', '/v1/devices', { imei, model: 'test-unit' });
    const deviceId = reg.json.id as string;
    const client = await TcpClient.open(p.platform.ports.gt06!);
    await login(client, encoders.gt06, { imei, terminalId: '', serial: 1 });
    client.send(checksumlessGpsPacket(fix(T0, CENTRE.lat, CENTRE.lng)));
    let history: Json[] = [];
    await until(async () => {
      history = (await p.api('GET', `/v1/positions?device_id=${deviceId}&from=${iso(T0 - 1000)}`)).json.data;
      return history.length === 1;
    }, 20_000, 'fix in the history');
    expect(history[0].lat).toBeCloseTo(CENTRE.lat, 4);
    expect(history[0].valid).toBe(true);
    client.close();
  });
});
