/**
 * A fleet story end to end: a Teltonika unit (real frames over a real socket
 * to the real gateway) drives east through a circular depot geofence, brakes
 * hard, speeds through a 60 km/h zone and crosses a polygon geofence. The
 * customer then reads GET /v1/events and the driver's daily score.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';
import { loadConfig } from '../../core/config.js';
import { imeiFrom } from '../../core/imei.js';
import { silentLogger } from '../../core/logger.js';
import { createCustomer } from '../../core/tenants.js';
import { startPlatform, type RunningPlatform } from '../../main.js';
import type { SimPoint } from '../simulator/encoders/types.js';
import { teltonikaEncoder } from '../simulator/encoders/teltonika.js';
import { TcpClient } from '../support/tcp-client.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-story-'));
let platform: RunningPlatform;
let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any

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
  const { api_key } = await createCustomer(platform.store, systemClock, { name: 'Story Logistics', plan: 'pro' });
  const base = `http://127.0.0.1:${platform.ports.http}`;
  api = async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${api_key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: res.status === 204 ? null : await res.json() };
  };
});

afterAll(async () => {
  await platform.stop();
  rmSync(dir, { recursive: true, force: true });
});

const LAT = 56.95;
const LNG0 = 24.0;
const M_PER_DEG_LNG = 111_320 * Math.cos((LAT * Math.PI) / 180);
const DAY = Date.UTC(2026, 10, 18);
const START = DAY + 8 * 3_600_000;

/** km east of the start -> longitude on the route's parallel. */
const lngAt = (km: number) => LNG0 + (km * 1000) / M_PER_DEG_LNG;

/**
 * The drive: speed profile in km/h per second. One fix a second during the
 * manoeuvres, so the server sees the braking and the speeding as they happen.
 */
function drive(): SimPoint[] {
  const speeds: number[] = [];
  const hold = (kmh: number, s: number) => {
    for (let i = 0; i < s; i++) speeds.push(kmh);
  };
  const ramp = (from: number, to: number, s: number) => {
    for (let i = 1; i <= s; i++) speeds.push(from + ((to - from) * i) / s);
  };
  ramp(0, 50, 10); // leave the depot
  hold(50, 60);
  ramp(50, 20, 2); // harsh brake: -30 km/h in 2 s
  hold(20, 10);
  ramp(20, 55, 35);
  ramp(55, 95, 40); // over the 60 km/h limit from 61 km/h on
  ramp(95, 50, 9);
  hold(50, 300); // through the polygon and beyond: over 5 km in all
  ramp(50, 0, 10);
  const points: SimPoint[] = [];
  let km = 0;
  speeds.forEach((kmh, i) => {
    km += kmh / 3600;
    points.push({
      fixTime: START + (i + 1) * 1000, lat: LAT, lng: lngAt(km), speedKmh: Math.round(kmh), headingDeg: 90, altitudeM: 10,
      satellites: 12, ignition: true, odometerM: Math.round(km * 1000),
    });
  });
  return points;
}

async function eventsInOrder(count: number): Promise<Array<Record<string, any>>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await api('GET', '/v1/events?order=asc&limit=200');
    expect(res.status).toBe(200);
    if (res.json.data.length >= count || Date.now() > deadline) return res.json.data;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a day on the road', () => {
  it('shows geofence crossings, a harsh brake and speeding in order, and scores the driver for them', async () => {
    const driver = await api('POST', '/v1/drivers', { name: 'Anna Berzina', external_id: 'E-1001' });
    expect(driver.status).toBe(201);
    const imei = imeiFrom('35209807654321');
    const device = await api('POST', '/v1/devices', {
      imei, model: 'FMB920', name: 'Truck 12', driver_id: driver.json.id, speed_limit_kmh: 60,
    });
    expect(device.status).toBe(201);
    // A circle around the 0.4 km mark and a polygon from 1.6 to 2.4 km along the road.
    const depot = await api('POST', '/v1/geofences', { name: 'Depot', center: { lat: LAT, lng: lngAt(0.4) }, radius_m: 200 });
    const zone = await api('POST', '/v1/geofences', {
      name: 'City zone',
      geometry: {
        type: 'Polygon',
        coordinates: [[[lngAt(1.6), LAT - 0.003], [lngAt(2.4), LAT - 0.003], [lngAt(2.4), LAT + 0.003], [lngAt(1.6), LAT + 0.003], [lngAt(1.6), LAT - 0.003]]],
      },
    });
    expect([depot.status, zone.status]).toEqual([201, 201]);

    const points = drive();
    const client = await TcpClient.open(platform.ports.teltonika!);
    const ctx = { imei, terminalId: '', serial: 1 };
    const take = (buf: Buffer) => {
      const t = teltonikaEncoder.takeReply(buf);
      return t ? { value: t.reply, consumed: t.consumed } : null;
    };
    for (const frame of teltonikaEncoder.handshake(ctx)) {
      client.send(frame);
      expect(teltonikaEncoder.isAck(await client.receive(take), frame, 0)).toBe(true);
    }
    for (let i = 0; i < points.length; i += 20) {
      const batch = points.slice(i, i + 20);
      const frame = teltonikaEncoder.encode(batch, { ...ctx, serial: ctx.serial++ });
      client.send(frame);
      expect(teltonikaEncoder.isAck(await client.receive(take), frame, batch.length)).toBe(true);
    }
    client.close();

    const events = await eventsInOrder(6);
    const story = events.map((e) => [e.kind, e.geofence_name ?? null]);
    expect(story).toEqual([
      ['geofence.enter', 'Depot'],
      ['geofence.exit', 'Depot'],
      ['event.harsh_brake', null],
      ['event.overspeed', null],
      ['geofence.enter', 'City zone'],
      ['geofence.exit', 'City zone'],
    ]);
    for (const e of events) expect(e).toMatchObject({ device_id: device.json.id, driver_id: driver.json.id, device_name: 'Truck 12' });

    // Where each happened: the first fix inside / outside, the start of the braking, the first fix over the limit.
    const firstFix = (test: (p: SimPoint) => boolean, after = 0) => points.find((p) => p.fixTime > after && test(p))!;
    const kmOf = (p: SimPoint) => p.odometerM / 1000;
    const byKind = (kind: string, name?: string) => events.find((e) => e.kind === kind && (name === undefined || e.geofence_name === name))!;
    const depotEnter = firstFix((p) => kmOf(p) >= 0.2);
    const zoneEnter = firstFix((p) => kmOf(p) >= 1.6);
    const zoneExit = firstFix((p) => kmOf(p) > 2.4);
    expect(byKind('geofence.enter', 'Depot').position.timestamp).toBe(new Date(depotEnter.fixTime).toISOString());
    expect(byKind('geofence.enter', 'City zone').position.timestamp).toBe(new Date(zoneEnter.fixTime).toISOString());
    expect(byKind('geofence.exit', 'City zone')).toMatchObject({
      position: { timestamp: new Date(zoneExit.fixTime).toISOString() },
      dwell_s: (zoneExit.fixTime - zoneEnter.fixTime) / 1000,
    });
    const brake = byKind('event.harsh_brake');
    expect(brake.delta_kmh).toBe(-30);
    expect(brake.severity).toBe('high');
    expect(brake.position.speed_kmh).toBe(50);
    const overspeed = byKind('event.overspeed');
    const firstOver = firstFix((p) => p.speedKmh > 60);
    expect(overspeed).toMatchObject({ limit_kmh: 60, delta_kmh: firstOver.speedKmh - 60 });
    expect(overspeed.position.timestamp).toBe(new Date(firstOver.fixTime).toISOString());

    const date = new Date(DAY).toISOString().slice(0, 10);
    const nextDate = new Date(DAY + 86_400_000).toISOString().slice(0, 10);
    const score = await api('GET', `/v1/drivers/${driver.json.id}/score?from=${date}&to=${nextDate}`);
    expect(score.status).toBe(200);
    const [day] = score.json.data;
    expect(day.date).toBe(date);
    expect(day.distance_km).toBeGreaterThan(5);
    expect(day.breakdown['event.harsh_brake'].count).toBe(1);
    expect(day.breakdown['event.overspeed'].count).toBe(1);
    expect(day.score).toBeLessThan(100);
    expect(day.score).toBeGreaterThan(0);
  }, 60_000);
});
