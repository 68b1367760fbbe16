/**
 * A fleet story end to end. Two simulated units, a Teltonika truck and a
 * JT/T 808 van, send real frames over real sockets to the real gateway. Each
 * drives east through its own geofence (the truck a circle, the van a polygon),
 * brakes hard inside it, speeds up over its limit, and drives out again. The
 * customer then reads GET /v1/events and the drivers' daily scores.
 *
 * Every expected value is worked out here from the points that were sent
 * (containment with Turf on the geometry we posted, speeds, great-circle
 * distances), never copied from what the platform answered.
 */
import { booleanPointInPolygon, distance, point, polygon } from '@turf/turf';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';
import { loadConfig } from '../../core/config.js';
import { imeiFrom } from '../../core/imei.js';
import { silentLogger } from '../../core/logger.js';
import { createCustomer } from '../../core/commands/customers.js';
import { startPlatform, type RunningPlatform } from '../../main.js';
import { jt808Encoder } from '../simulator/encoders/jt808.js';
import { teltonikaEncoder } from '../simulator/encoders/teltonika.js';
import type { EncodeContext, ProtocolEncoder, SimPoint } from '../simulator/encoders/types.js';
import { runLogin } from '../simulator/login.js';
import { TcpClient } from '../support/tcp-client.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const dir = mkdtempSync(join(tmpdir(), 'fleet-story-'));
let platform: RunningPlatform;
let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: Json }>;

const CUSTOMER_LIMIT_KMH = 70;
const TRUCK_LIMIT_KMH = 60;

beforeAll(async () => {
  const config = loadConfig({
    FLEET_DATA_DIR: dir,
    FLEET_HTTP_PORT: '0',
    FLEET_TELTONIKA_PORT: '0',
    FLEET_GT06_PORT: '0',
    FLEET_JT808_PORT: '0',
    FLEET_HTTP_HOST: '127.0.0.1',
    FLEET_GATEWAY_HOST: '127.0.0.1',
  });
  platform = await startPlatform(config, ['gateway', 'projections', 'api'], silentLogger);
  const { api_key } = await createCustomer(platform.store, systemClock, {
    name: 'Story Logistics', plan: 'pro', speed_limit_kmh: CUSTOMER_LIMIT_KMH,
  });
  const base = `http://127.0.0.1:${platform.ports.http}`;
  api = async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${api_key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: res.status === 204 ? {} : ((await res.json()) as Json) };
  };
});

afterAll(async () => {
  await platform.stop();
  rmSync(dir, { recursive: true, force: true });
});

const DAY = Date.UTC(2026, 10, 18);
const START = DAY + 8 * 3_600_000;
const M_PER_DEG_LAT = 111_320;

/** The same speed profile for both units, km/h per second. */
function speedProfile(): number[] {
  const speeds: number[] = [];
  const hold = (kmh: number, s: number) => {
    for (let i = 0; i < s; i++) speeds.push(kmh);
  };
  const ramp = (from: number, to: number, s: number) => {
    for (let i = 1; i <= s; i++) speeds.push(from + ((to - from) * i) / s);
  };
  ramp(0, 50, 10); // pull away
  hold(50, 60); // into the geofence
  ramp(50, 20, 2); // harsh brake: 15 km/h per second
  hold(20, 10);
  ramp(20, 80, 40); // gently (1.5 km/h per second) over both limits
  hold(80, 20);
  ramp(80, 50, 10);
  hold(50, 300); // out of the geofence and on: over 5 km in all
  ramp(50, 0, 10);
  return speeds;
}

/** One fix a second due east along the parallel `lat`, starting at `lng0`. */
function drive(lat: number, lng0: number): SimPoint[] {
  const mPerDegLng = M_PER_DEG_LAT * Math.cos((lat * Math.PI) / 180);
  let m = 0;
  return speedProfile().map((kmh, i) => {
    m += kmh / 3.6;
    return {
      fixTime: START + (i + 1) * 1000,
      // JT/T 808 carries 1e-6 degrees: round so sent and stored values compare exactly.
      lat,
      lng: Math.round((lng0 + m / mPerDegLng) * 1e6) / 1e6,
      speedKmh: Math.round(kmh),
      headingDeg: 90,
      altitudeM: 10,
      satellites: 12,
      ignition: true,
      odometerM: Math.round(m),
    };
  });
}

/** Handshake, then frames of 10 points, each waiting for its ack, as a unit does. */
async function sendOverTcp(port: number, encoder: ProtocolEncoder, identity: Omit<EncodeContext, 'serial'>, points: SimPoint[]): Promise<void> {
  const client = await TcpClient.open(port);
  const ctx: EncodeContext = { ...identity, serial: 1 };
  const take = (buf: Buffer) => {
    const t = encoder.takeReply(buf);
    return t ? { value: t.reply, consumed: t.consumed } : null;
  };
  const login = await runLogin(encoder, ctx, async (frame) => {
    client.send(frame);
    return client.receive(take);
  });
  expect(login.ok).toBe(true);
  ctx.serial += login.steps.length;
  for (let i = 0; i < points.length; i += 10) {
    const batch = points.slice(i, i + 10);
    const frame = encoder.encode(batch, ctx);
    ctx.serial += 1;
    client.send(frame);
    expect(encoder.isAck(await client.receive(take), frame, batch.length)).toBe(true);
  }
  client.close();
}

const iso = (t: number) => new Date(t).toISOString();
const at = (p: SimPoint) => point([p.lng, p.lat]);

/** What a unit's events must say, worked out from its points alone. */
function expectedStory(points: SimPoint[], inside: (p: SimPoint) => boolean, limitKmh: number) {
  const enter = points.findIndex(inside);
  const exit = points.findIndex((p, i) => i > enter && !inside(p));
  // Harsh braking: the run of consecutive one-second drops of at least 11 km/h; it starts at the fix before the first drop.
  const drop = (i: number) => points[i]!.speedKmh - points[i + 1]!.speedKmh >= 11;
  const brakeStart = points.findIndex((_, i) => i + 1 < points.length && drop(i));
  let brakeEnd = brakeStart + 1;
  while (brakeEnd + 1 < points.length && drop(brakeEnd)) brakeEnd++;
  const over = points.find((p) => p.speedKmh > limitKmh)!;
  const p = (q: SimPoint) => ({ lat: q.lat, lng: q.lng, speed_kmh: q.speedKmh, timestamp: iso(q.fixTime) });
  return [
    { kind: 'geofence.enter', position: p(points[enter]!) },
    {
      kind: 'event.harsh_brake',
      position: p(points[brakeStart]!),
      delta_kmh: points[brakeEnd]!.speedKmh - points[brakeStart]!.speedKmh,
      duration_ms: points[brakeEnd]!.fixTime - points[brakeStart]!.fixTime,
    },
    { kind: 'event.overspeed', position: p(over), limit_kmh: limitKmh, delta_kmh: over.speedKmh - limitKmh },
    { kind: 'geofence.exit', position: p(points[exit]!), dwell_s: (points[exit]!.fixTime - points[enter]!.fixTime) / 1000 },
  ];
}

/**
 * The day's score by the formula of docs/api-decisions.md, from the points: distance and driving
 * time of the stretches between fixes whose mean speed is at least 3 km/h,
 * overspeed time where that mean is over the limit; one harsh brake.
 */
function expectedScore(points: SimPoint[], limitKmh: number) {
  let km = 0;
  let drivingS = 0;
  let overS = 0;
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1]!;
    const b = points[i]!;
    const mean = (a.speedKmh + b.speedKmh) / 2;
    if (mean < 3) continue;
    km += distance(at(a), at(b), { units: 'kilometers' });
    drivingS += (b.fixTime - a.fixTime) / 1000;
    if (mean > limitKmh) overS += (b.fixTime - a.fixTime) / 1000;
  }
  const brakePoints = (2 * 100) / km;
  const overspeedPoints = (100 * overS) / drivingS;
  return { km, drivingS, brakePoints, overspeedPoints, score: 100 - brakePoints - overspeedPoints };
}

/** Events of one device, oldest first, once the projections have caught up with everything the units sent. */
async function eventsOf(deviceId: string, atLeast: number): Promise<Json[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    await platform.runner!.catchUp();
    const res = await api('GET', `/v1/events?device_id=${deviceId}&order=asc&limit=200`);
    expect(res.status).toBe(200);
    if (res.json.data.length >= atLeast || Date.now() > deadline) return res.json.data as Json[];
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a day on the road', () => {
  it('shows each unit entering its geofence, braking hard, speeding and leaving, in order and in place, and scores the drivers', async () => {
    const anna = await api('POST', '/v1/drivers', { name: 'Anna Berzina', external_id: 'E-1001' });
    const boris = await api('POST', '/v1/drivers', { name: 'Boris Kalnins', external_id: 'E-1002' });
    expect([anna.status, boris.status]).toEqual([201, 201]);

    // The truck (Teltonika) has its own 60 km/h limit; the van (JT/T 808) goes by the customer's 70.
    const truckImei = imeiFrom('35209807654321');
    const vanImei = imeiFrom('86512304567890');
    const vanTerminal = '13912345678';
    const truck = await api('POST', '/v1/devices', {
      imei: truckImei, model: 'FMB920', name: 'Truck 12', driver_id: anna.json.id, speed_limit_kmh: TRUCK_LIMIT_KMH,
    });
    const van = await api('POST', '/v1/devices', { imei: vanImei, model: 'JC450', name: 'Van 7', terminal_id: vanTerminal });
    expect([truck.status, van.status]).toEqual([201, 201]);
    expect((await api('PATCH', `/v1/devices/${van.json.id}`, { driver_id: boris.json.id })).status).toBe(200);

    // The truck's road runs along 56.95 N, the van's along 57.00 N, 5.5 km apart.
    const truckPoints = drive(56.95, 24.0);
    const vanPoints = drive(57.0, 24.0);
    // The depot: a 920 m circle centred 1.5 km along the truck's road.
    const depotCentre = { lat: 56.95, lng: truckPoints.find((p) => p.odometerM >= 1500)!.lng };
    const depot = await api('POST', '/v1/geofences', { name: 'Depot', center: depotCentre, radius_m: 920 });
    // The city zone: a quadrilateral around the van's road from 0.6 to 2.4 km, its sides halfway between two fixes.
    const lngAtM = (m: number) => {
      const i = vanPoints.findIndex((p) => p.odometerM >= m);
      return (vanPoints[i - 1]!.lng + vanPoints[i]!.lng) / 2;
    };
    const ring = [[lngAtM(600), 56.997], [lngAtM(2400), 56.996], [lngAtM(2400), 57.004], [lngAtM(600), 57.003], [lngAtM(600), 56.997]];
    const zone = await api('POST', '/v1/geofences', { name: 'City zone', geometry: { type: 'Polygon', coordinates: [ring] } });
    expect([depot.status, zone.status]).toEqual([201, 201]);

    // Containment worked out independently. The stored circle is a 64-gon up to 0.13 % (1.2 m) inside the
    // true one, so no fix may lie that close to the rim, or the expectation would be ambiguous.
    const depotCentrePoint = point([depotCentre.lng, depotCentre.lat]);
    const metresFromDepot = (p: SimPoint) => distance(depotCentrePoint, at(p), { units: 'kilometers' }) * 1000;
    expect(truckPoints.every((p) => Math.abs(metresFromDepot(p) - 920) > 2)).toBe(true);
    const inDepot = (p: SimPoint) => metresFromDepot(p) < 920;
    const zonePolygon = polygon([ring]);
    const inZone = (p: SimPoint) => booleanPointInPolygon(at(p), zonePolygon);

    // Both units drive at the same time, over their own connections.
    await Promise.all([
      sendOverTcp(platform.ports.teltonika!, teltonikaEncoder, { imei: truckImei, terminalId: '' }, truckPoints),
      sendOverTcp(platform.ports.jt808!, jt808Encoder, { imei: vanImei, terminalId: vanTerminal }, vanPoints),
    ]);

    const stories = [
      { device: truck.json, driver: anna.json, points: truckPoints, fence: depot.json, inside: inDepot, limit: TRUCK_LIMIT_KMH },
      { device: van.json, driver: boris.json, points: vanPoints, fence: zone.json, inside: inZone, limit: CUSTOMER_LIMIT_KMH },
    ];
    for (const s of stories) {
      const expected = expectedStory(s.points, s.inside, s.limit);
      const events = await eventsOf(s.device.id, expected.length);
      expect(events.map((e) => e.kind)).toEqual(['geofence.enter', 'event.harsh_brake', 'event.overspeed', 'geofence.exit']);
      for (const [i, e] of events.entries()) {
        const { position, ...fields } = expected[i]!;
        expect(e).toMatchObject({ ...fields, device_id: s.device.id, device_name: s.device.name, driver_id: s.driver.id });
        expect(e.position).toMatchObject({ speed_kmh: position.speed_kmh, timestamp: position.timestamp });
        expect(e.position.lat).toBeCloseTo(position.lat, 6);
        expect(e.position.lng).toBeCloseTo(position.lng, 6);
        expect(e.occurred_at).toBe(position.timestamp);
      }
      expect(events[0]).toMatchObject({ geofence_id: s.fence.id, geofence_name: s.fence.name });
      expect(events[3]).toMatchObject({ geofence_id: s.fence.id, geofence_name: s.fence.name });
      expect(events[1]).toMatchObject({ source: 'server', severity: 'high' }); // |-30| km/h is over 25

      const date = iso(DAY).slice(0, 10);
      const nextDate = iso(DAY + 86_400_000).slice(0, 10);
      const score = await api('GET', `/v1/drivers/${s.driver.id}/score?from=${date}&to=${nextDate}`);
      expect(score.status).toBe(200);
      const [day] = score.json.data as Json[];
      const want = expectedScore(s.points, s.limit);
      expect(day!.date).toBe(date);
      expect(day!.distance_km).toBeCloseTo(want.km, 2);
      expect(day!.driving_s).toBeCloseTo(want.drivingS, 0);
      expect(day!.breakdown['event.harsh_brake']).toMatchObject({ count: 1 });
      expect(day!.breakdown['event.harsh_brake'].points).toBeCloseTo(want.brakePoints, 1);
      expect(day!.breakdown['event.overspeed']).toMatchObject({ count: 1 });
      expect(day!.breakdown['event.overspeed'].points).toBeCloseTo(want.overspeedPoints, 1);
      expect(Math.abs(day!.score - want.score)).toBeLessThanOrEqual(0.05); // the API rounds to one decimal
      for (const kind of Object.keys(day!.breakdown)) {
        if (kind !== 'event.harsh_brake' && kind !== 'event.overspeed') expect(day!.breakdown[kind].count).toBe(0);
      }
    }
  }, 60_000);
});
