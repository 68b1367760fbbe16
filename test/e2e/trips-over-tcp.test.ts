/**
 * Trips end to end: a planned day (drives, an idle, parks) sent by simulated
 * Teltonika, GT06 and JT/T 808 units over real TCP, each with its own ignition
 * source (IO 239, the GT06 ACC byte, JT/T 808 status bit 0), read back from
 * /v1/trips, /v1/stops, /v1/idling and the accumulators: times within one
 * report interval, distances within 2 %. One unit sends a stretch of records
 * after newer ones (buffered through a coverage gap); they land in their
 * trip. A GT06 unit that tells its ignition only in heartbeats (real 0x13
 * frames) has its trips cut by the key, and named by the geofence it starts in. Then the read models are deleted and
 * rebuilt from the log: the same answers, byte for byte.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';
import { createCustomer } from '../../core/commands/customers.js';
import { ALL_ROLES, loadConfig, type Config } from '../../core/config.js';
import { silentLogger } from '../../core/logger.js';
import type { ProtocolName } from '../../gateway/protocol.js';
import { startPlatform, type RunningPlatform } from '../../main.js';
import { SimulatedDevice } from '../simulator/device.js';
import type { SimPoint } from '../simulator/encoders/types.js';
import { PlannedRoute, type Leg } from '../simulator/planned-route.js';
import { encoders, simulatedIdentity } from '../simulator/run.js';
import { gpsLbsPacket, gt06Encoder } from '../simulator/encoders/gt06.js';
import { login, replyOf } from '../support/device-login.js';
import { bearerApi, type Api, type Json } from '../support/platform-harness.js';
import { TcpClient } from '../support/tcp-client.js';
import { eventually } from '../support/wait.js';

const INTERVAL_S = 10;
const INTERVAL_MS = INTERVAL_S * 1000;
const LEGS: Leg[] = [
  { park_s: 300 },
  { drive_km: 5, speed_kmh: 50, heading_deg: 10 },
  { idle_s: 240 },
  { drive_km: 3, speed_kmh: 60, heading_deg: 100 },
  { park_s: 600 },
  { drive_km: 4, speed_kmh: 40, heading_deg: 250 },
  { park_s: 400 },
];
const PROTOCOLS: ProtocolName[] = ['teltonika', 'gt06', 'jt808'];

const dir = mkdtempSync(join(tmpdir(), 'fleet-trips-e2e-'));
let config: Config;
let platform: RunningPlatform;
let apiKey: string;
let api: Api;
const plans = new Map<ProtocolName, { deviceId: string; plan: PlannedRoute }>();

async function start(): Promise<void> {
  platform = await startPlatform(config, ALL_ROLES, silentLogger);
  api = bearerApi(`http://127.0.0.1:${platform.ports.http}`, apiKey);
}

beforeAll(async () => {
  config = loadConfig({
    FLEET_DATA_DIR: dir,
    FLEET_SECRET_KEY: randomBytes(32).toString('base64'),
    FLEET_HTTP_PORT: '0',
    FLEET_TELTONIKA_PORT: '0',
    FLEET_GT06_PORT: '0',
    FLEET_JT808_PORT: '0',
    FLEET_HTTP_HOST: '127.0.0.1',
    FLEET_GATEWAY_HOST: '127.0.0.1',
  });
  platform = await startPlatform(config, ALL_ROLES, silentLogger);
  apiKey = (await createCustomer(platform.store, systemClock, { name: 'Trips Freight', plan: 'pro' })).api_key;
  api = bearerApi(`http://127.0.0.1:${platform.ports.http}`, apiKey);
});

afterAll(async () => {
  await platform.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends every point of `order` over TCP, each frame waiting for its ack. */
async function drive(protocol: ProtocolName, index: number, order: (plan: PlannedRoute) => SimPoint[]): Promise<void> {
  const identity = simulatedIdentity(56, index);
  const created = await api('POST', '/v1/devices', { imei: identity.imei, model: `sim-${protocol}`, ...(protocol === 'jt808' ? { terminal_id: identity.terminalId } : {}) });
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  // Started hours ago, so that every fix is in the past when it arrives.
  const startTime = Math.floor(Date.now() / 60_000) * 60_000 - 6 * 3_600_000 + index * 60_000;
  const plan = new PlannedRoute({ startLat: 56.95 + index * 0.05, startLng: 24.1, startTime, intervalS: INTERVAL_S, legs: LEGS });
  plans.set(protocol, { deviceId: created.json.id, plan });
  const encoder = encoders[protocol];
  const source = plan.source(order(plan));
  const device = new SimulatedDevice({
    host: '127.0.0.1',
    port: platform.ports[protocol]!,
    encoder,
    ctx: { imei: identity.imei, terminalId: identity.terminalId },
    route: source,
    pointsPerFrame: Math.min(10, encoder.maxPointsPerFrame),
    ackTimeoutMs: 10_000,
    onAck: () => {},
  });
  try {
    while (source.remaining! > 0) await device.step();
  } finally {
    device.stop();
  }
}

const iso = (ms: number) => new Date(ms).toISOString();
const within = (got: string | null, want: number | null) => {
  expect(got === null, `${got} against ${want === null ? null : iso(want)}`).toBe(want === null);
  if (got !== null && want !== null) expect(Math.abs(Date.parse(got) - want), `${got} against ${iso(want)}`).toBeLessThanOrEqual(INTERVAL_MS);
};

/** The device's trips once as many as planned are there (the last one closes a minimal stop after its ignition off). */
async function tripsOf(protocol: ProtocolName): Promise<Json[]> {
  const { deviceId, plan } = plans.get(protocol)!;
  return eventually(async () => {
    const res = await api('GET', `/v1/trips?device_id=${deviceId}`);
    return res.json.data.length === plan.trips.length ? (res.json.data as Json[]) : undefined;
  }, `${protocol} trips`);
}

describe('planned drives over TCP, read back as trips, stops and idling', () => {
  it.each(PROTOCOLS.map((p, i) => [p, i] as const))('%s: trips, stops and idling as driven', async (protocol, index) => {
    await drive(protocol, index, (plan) => plan.points);
    const { deviceId, plan } = plans.get(protocol)!;
    const trips = await tripsOf(protocol);
    trips.forEach((t, i) => {
      const want = plan.trips[i]!;
      within(t.start.time, want.start);
      within(t.end.time, want.end);
      expect(Math.abs(t.distance_km * 1000 - want.distance_m) / want.distance_m, `${protocol} trip ${i} distance ${t.distance_km} km`).toBeLessThan(0.02);
    });
    expect(Math.abs(trips[0].idle_s - 240)).toBeLessThanOrEqual(INTERVAL_S);

    const stops = (await api('GET', `/v1/stops?device_id=${deviceId}`)).json.data as Json[];
    // The stop the day began in starts with the first fix; then one after each trip, the last one still open.
    expect(stops).toHaveLength(plan.stops.length + 1);
    stops.slice(1).forEach((s, i) => {
      within(s.start, plan.stops[i]!.start);
      within(s.end, plan.stops[i]!.end);
    });
    const idling = (await api('GET', `/v1/idling?device_id=${deviceId}`)).json.data as Json[];
    expect(idling).toHaveLength(1);
    within(idling[0].start, plan.idles[0]!.start);
    within(idling[0].end, plan.idles[0]!.end);

    const accumulators = (await api('GET', `/v1/devices/${deviceId}/accumulators`)).json;
    const driven = plan.trips.reduce((n, t) => n + t.distance_m, 0);
    // Each unit's own odometer counter (Teltonika IO 16 and GT06 mileage in metres, JT/T 808 in 0.1 km).
    expect(Math.abs(accumulators.odometer_km * 1000 - driven)).toBeLessThan(0.02 * driven);
    const ignitionOnS = plan.trips.reduce((n, t) => n + (t.end! - t.start) / 1000, 0);
    expect(Math.abs(accumulators.engine_hours * 3600 - ignitionOnS)).toBeLessThanOrEqual(2 * INTERVAL_S);
  });

  it('puts records sent after newer ones (a coverage gap, then the buffer) in the trip they belong to', async () => {
    await drive('teltonika', 3, (plan) => {
      // Out of coverage from two minutes into the first trip until just before it ends: those records come last.
      const first = plan.trips[0]!;
      const held = plan.points.filter((p) => p.fixTime > first.start + 120_000 && p.fixTime < first.end! - 30_000);
      return [...plan.points.filter((p) => !held.includes(p)), ...held];
    });
    const { plan } = plans.get('teltonika')!;
    const want = plan.trips[0]!;
    // The held records carry most of the first trip's distance: without them it is far short.
    const first = await eventually(async () => {
      const t = (await tripsOf('teltonika'))[0];
      return Math.abs(t.distance_km * 1000 - want.distance_m) / want.distance_m < 0.02 ? t : undefined;
    }, 'first trip with its late records');
    within(first.start.time, want.start);
    within(first.end.time, want.end);
    expect(Math.abs(first.idle_s - 240)).toBeLessThanOrEqual(INTERVAL_S);
  });

  it('cuts the trips of a GT06 unit that tells its ignition only in heartbeats (0x13 ACC bit) by the key, in its geofences', async () => {
    const identity = simulatedIdentity(56, 4);
    const created = await api('POST', '/v1/devices', { imei: identity.imei, model: 'GT06N' });
    expect(created.status).toBe(201);
    // The drive ends just before now: heartbeats carry no time, the server's clock times them, so the key-off comes after it.
    const legs: Leg[] = [{ park_s: 60 }, { drive_km: 2, speed_kmh: 60, heading_deg: 0 }, { idle_s: 240 }, { drive_km: 1, speed_kmh: 60, heading_deg: 90 }];
    const durationMs = (60 + 120 + 240 + 60) * 1000;
    const startTime = Math.floor(Date.now() / 1000) * 1000 - durationMs - 5_000;
    const plan = new PlannedRoute({ startLat: 57.2, startLng: 24.1, startTime, intervalS: INTERVAL_S, legs });
    // Its yard, a geofence the trip starts in (the rebuild below must name it again).
    const yard = await api('POST', '/v1/geofences', { name: 'Yard', center: { lat: 57.2, lng: 24.1 }, radius_m: 200 });
    expect(yard.status).toBe(201);
    // Real heartbeat frames from the corpus (test/fixtures/conformance, #93 and #180): terminal info 0x06 (ACC on) and 0xc4 (ACC off).
    const accOn = Buffer.from('78780a130604ea04000006bc8a0d0a', 'hex');
    const accOff = Buffer.from('78780a13c40604000201298f5b0d0a', 'hex');
    const client = await TcpClient.open(platform.ports.gt06!);
    let keyOff = { from: 0, to: 0 };
    try {
      await login(client, gt06Encoder, { imei: identity.imei, terminalId: identity.terminalId, serial: 1 });
      const send = async (frame: Buffer) => {
        client.send(frame);
        expect(gt06Encoder.isAck(await client.receive(replyOf(gt06Encoder), 10_000), frame, 1)).toBe(true);
      };
      let ignition = false;
      for (const [i, p] of plan.points.entries()) {
        if (p.ignition !== ignition) await send(p.ignition ? accOn : accOff);
        ignition = p.ignition;
        // 0x12: position and cell, no ACC: the heartbeat is the only word on the ignition.
        await send(gpsLbsPacket(p, i + 2));
      }
      // Key off, and the GPS sleeps: no fix, only the heartbeat, timed by the server.
      const from = Date.now();
      await send(accOff);
      keyOff = { from: Math.floor(from / 1000) * 1000, to: Date.now() };
      // The key turns again five minutes on: a fix that far ahead of the server's clock (a device's may run up to 10 minutes ahead).
      const last = plan.points.at(-1)!;
      await send(accOn);
      await send(gpsLbsPacket({ ...last, fixTime: keyOff.to + 300_000, speedKmh: 30 }, plan.points.length + 2));
    } finally {
      client.close();
    }
    const deviceId = created.json.id as string;
    const trips = await eventually(async () => {
      const data = (await api('GET', `/v1/trips?device_id=${deviceId}`)).json.data as Json[];
      return data.length > 0 ? data : undefined;
    }, 'GT06 heartbeat trip');
    // One trip from the key turn (motion alone would start a report later, and split it at the four-minute idle) to the key off.
    expect(trips).toHaveLength(1);
    expect(trips[0].start.time).toBe(iso(plan.trips[0]!.start));
    const end = Date.parse(trips[0].end.time);
    expect(end).toBeGreaterThanOrEqual(keyOff.from);
    expect(end).toBeLessThanOrEqual(keyOff.to);
    expect(trips[0].idle_s).toBe(240);
    expect([trips[0].start.geofences, trips[0].end.geofences]).toEqual([[yard.json.id], []]);
    const idling = (await api('GET', `/v1/idling?device_id=${deviceId}`)).json.data as Json[];
    expect(idling.map((s) => [s.start, s.end])).toEqual(plan.idles.map((s) => [iso(s.start), iso(s.end!)]));
    // The heartbeats are no positions: the history (its own runner, committed apart) holds the 0x12 fixes only.
    const history = `/v1/positions?device_id=${deviceId}&from=${iso(startTime - 60_000)}&to=${iso(startTime + 3_600_000)}&limit=1000`;
    const fixes = await eventually(async () => {
      const data = (await api('GET', history)).json.data as Json[];
      return data.length >= plan.points.length + 1 ? data : undefined;
    }, 'GT06 history');
    expect(fixes).toHaveLength(plan.points.length + 1);
  });

  it('rebuilds trips, stops, idling and accumulators byte for byte from the log', async () => {
    const reads = [
      '/v1/trips', '/v1/trips?format=csv', '/v1/stops', '/v1/idling', '/v1/settings/trips',
      ...[...plans.values()].map((p) => `/v1/devices/${p.deviceId}/accumulators`),
    ];
    const capture = async () => {
      const out: string[] = [];
      for (const path of reads) {
        const res = await fetch(`http://127.0.0.1:${platform.ports.http}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
        out.push(`${res.status} ${await res.text()}`);
      }
      return out;
    };
    const before = await capture();
    expect(before[0]).toContain('"distance_km"');
    await platform.stop();
    for (const f of readdirSync(dir)) if (f.startsWith('readmodels.sqlite')) rmSync(join(dir, f));
    await start();
    // The start waits for the read models to catch up with the log before it listens.
    expect(await capture()).toEqual(before);
  });
});
