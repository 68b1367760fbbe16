/**
 * Webhooks end to end over real device frames: a JT/T 808 van with driver
 * monitoring and ADAS, and a Teltonika truck reporting its ignition, drive
 * through a geofence over real sockets; a real local receiver gets every one
 * of the 19 kinds, signed, with the fields of its kind, under the event_id
 * the API shows. Also: secret rotation, tenant isolation.
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_KINDS, EVENT_KINDS as ALL_KINDS, type DeviceAlarmKind } from '../../core/alarms.js';
import { imeiFrom } from '../../core/imei.js';
import { WEBHOOK_FAMILIES } from '../../api/schemas/webhooks.js';
import type { EncodeContext, ProtocolEncoder, SimPoint } from '../simulator/encoders/types.js';
import { encoders } from '../simulator/run.js';
import { login, replyOf, until } from '../support/device-login.js';
import { startPlatformHarness, type Json, type PlatformHarness } from '../support/platform-harness.js';
import { TcpClient } from '../support/tcp-client.js';
import { signatureValid, startWebhookReceiver, type Received, type WebhookReceiver } from '../support/webhook-receiver.js';

/** Command kinds come from the command sender, not from frames: test/e2e/command-webhooks.test.ts. */
const EVENT_KINDS = ALL_KINDS.filter((k) => !(COMMAND_KINDS as readonly string[]).includes(k));

let p: PlatformHarness;
let rx: WebhookReceiver;
let webhook: { id: string; secret: string };
let fence: { id: string; name: string };
const CENTRE = { lat: 56.95, lng: 24.1 };
const T0 = Math.floor(Date.now() / 1000) * 1000 - 30 * 60_000;

const VAN_ALARMS: DeviceAlarmKind[] = [
  'event.sos',
  'event.overspeed',
  'alarm.dsm.fatigue',
  'alarm.dsm.phone',
  'alarm.adas.collision',
  'alarm.adas.lane_departure',
  'alarm.bsd',
  'event.acceleration',
  'event.harsh_brake',
  'event.curve',
];

function point(i: number, lat: number, alarm?: DeviceAlarmKind, ignition = true): SimPoint {
  return { fixTime: T0 + i * 20_000, lat, lng: CENTRE.lng, speedKmh: 50, headingDeg: 0, altitudeM: 20, satellites: 9, ignition, odometerM: i * 280, ...(alarm ? { alarm } : {}) };
}

/** Logs in, sends every point in its own frame (each acknowledged), and hangs up. */
async function drive(encoder: ProtocolEncoder, ctx: EncodeContext, points: SimPoint[]): Promise<void> {
  const client = await TcpClient.open(p.platform.ports[encoder.protocol]!);
  await login(client, encoder, ctx);
  for (const pt of points) {
    ctx.serial += 1;
    const frame = encoder.encode([pt], ctx);
    client.send(frame);
    expect(encoder.isAck(await client.receive(replyOf(encoder)), frame, 1)).toBe(true);
  }
  client.close();
}

const byKind = (kind: string) => rx.received.filter((r) => r.json.event === kind);

beforeAll(async () => {
  p = await startPlatformHarness();
  rx = await startWebhookReceiver();
  const created = await p.api('POST', '/v1/webhooks', { url: rx.url, events: ['*'], description: 'everything' });
  expect(created.status).toBe(201);
  webhook = { id: created.json.id, secret: created.json.secret };
  // Two minutes inside is a dwell: the van, 200 s inside, raises one.
  const geofence = await p.api('POST', '/v1/geofences', { name: 'Depot', center: CENTRE, radius_m: 2000, dwell_s: 120 });
  expect(geofence.status).toBe(201);
  fence = { id: geofence.json.id, name: 'Depot' };

  // The van: from 3.3 km south through the fence to 3.3 km north, one alarm a point inside it.
  const vanImei = imeiFrom('35209807600001');
  const vanTerminal = '13800076001';
  expect((await p.api('POST', '/v1/devices', { imei: vanImei, model: 'JC450', name: 'Van', terminal_id: vanTerminal })).status).toBe(201);
  const lats = [-0.03, -0.025, -0.015, -0.01, -0.008, -0.006, -0.004, -0.002, 0, 0.002, 0.004, 0.006, 0.01, 0.025, 0.03];
  const vanPoints = lats.map((d, i) => point(i, CENTRE.lat + d, i >= 3 && i < 3 + VAN_ALARMS.length ? VAN_ALARMS[i - 3] : undefined));
  await drive(encoders.jt808, { imei: vanImei, terminalId: vanTerminal, serial: 0 }, vanPoints);

  // The truck: ignition on, idling 160 s, a short trip, ignition off, and still parked a minimal stop later (the trip completes).
  const truckImei = imeiFrom('35209807600002');
  expect((await p.api('POST', '/v1/devices', { imei: truckImei, model: 'FMB920', name: 'Truck' })).status).toBe(201);
  const far = CENTRE.lat + 0.1;
  const standing = (pt: SimPoint): SimPoint => ({ ...pt, speedKmh: 0 });
  await drive(encoders.teltonika, { imei: truckImei, terminalId: '', serial: 0 }, [
    standing(point(0, far, 'event.ignition_on')),
    ...[1, 2, 3, 4, 5, 6, 7].map((i) => standing(point(i, far))),
    point(8, far + 0.005),
    point(9, far + 0.01),
    standing(point(10, far + 0.01, 'event.ignition_off', false)),
    standing(point(20, far + 0.01, undefined, false)),
  ]);
  await until(() => EVENT_KINDS.every((k) => byKind(k).length > 0), 30_000, `every kind (got ${[...new Set(rx.received.map((r) => r.json.event))].join(', ')})`);
}, 60_000);

afterAll(async () => {
  await rx.close();
  await p.close();
});

describe('webhooks over real device frames', () => {
  it('delivers each of the 19 kinds, signed with the secret and a current timestamp, with the delivery headers', () => {
    for (const kind of EVENT_KINDS) {
      const r = byKind(kind)[0]!;
      expect(signatureValid(r, webhook.secret), kind).toBe(true);
      expect(signatureValid(r, `${webhook.secret}x`), kind).toBe(false);
      expect(Math.abs(Number(r.headers['x-service-timestamp']) - Date.now() / 1000), kind).toBeLessThan(120);
      expect(r.headers['x-service-event']).toBe(kind);
      expect(r.headers['x-service-event-id']).toBe(r.json.event_id);
      expect(r.headers['x-service-delivery-id']).toMatch(/^dlv_/);
      expect(r.headers['x-service-attempt']).toBe('1');
      expect(r.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('sends payloads that match the documented schema of their kind', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    for (const family of WEBHOOK_FAMILIES) {
      const validate = ajv.compile(family.schema);
      for (const kind of family.kinds) {
        for (const r of byKind(kind)) expect(validate(r.json) ? 'valid' : JSON.stringify(validate.errors), `${kind} ${r.raw}`).toBe('valid');
      }
    }
  });

  it('fills the fields of each kind from what the devices sent', () => {
    const van = (k: string) => byKind(k).find((r) => r.json.device_name === 'Van')!.json;
    expect(van('device.online')).toMatchObject({ protocol: 'jt808', severity: 'info' });
    expect(van('device.offline')).toMatchObject({ reason: 'closed', severity: 'low' });
    expect(van('geofence.enter')).toMatchObject({ geofence_id: fence.id, geofence_name: fence.name });
    expect(van('geofence.exit')).toMatchObject({ geofence_id: fence.id, geofence_name: fence.name, dwell_s: expect.any(Number) });
    // At the first fix two minutes (six 20-second reports) after the entering one; once, though four more fixes follow inside.
    expect(byKind('geofence.dwell').map((r) => r.json)).toMatchObject([{ device_name: 'Van', geofence_id: fence.id, geofence_name: fence.name, dwell_s: 120, severity: 'info' }]);
    expect(van('event.sos')).toMatchObject({ severity: 'critical' });
    expect(van('alarm.adas.collision')).toMatchObject({ severity: 'critical' });
    expect(van('alarm.dsm.fatigue')).toMatchObject({ severity: 'high' });
    for (const k of ['alarm.dsm.phone', 'alarm.adas.lane_departure', 'alarm.bsd']) expect(van(k).severity, k).toBe('medium');
    for (const k of ['alarm.dsm.fatigue', 'alarm.dsm.phone', 'alarm.adas.collision', 'alarm.adas.lane_departure', 'alarm.bsd']) {
      expect(van(k), k).toHaveProperty('alarm_level');
      expect(van(k), k).toHaveProperty('media_count');
    }
    const positions = byKind('position.updated').filter((r) => r.json.device_name === 'Van').map((r) => r.json.position.lat);
    expect(positions).toHaveLength(15);
    expect(positions).toEqual([...positions].sort((a, b) => a - b)); // in order for the device
    const truckOff = byKind('event.ignition_off')[0]!.json;
    expect(truckOff).toMatchObject({ device_name: 'Truck', trip_distance_km: expect.any(Number), trip_duration_s: 200 });
    expect(byKind('trip.completed')[0]!.json).toMatchObject({ device_name: 'Truck', trip_duration_s: 200, trip_idle_s: 160, trip_max_speed_kmh: 50 });
    expect(byKind('idle.ended')[0]!.json).toMatchObject({ device_name: 'Truck', idle_duration_s: 160 });
  });

  it('uses the event_id GET /v1/events shows for the same event', async () => {
    for (const kind of EVENT_KINDS.filter((k) => !['position.updated', 'device.online', 'device.offline'].includes(k))) {
      const r = byKind(kind)[0]!;
      const shown = await p.api('GET', `/v1/events/${r.json.event_id}`);
      expect(shown.status, kind).toBe(200);
      expect(shown.json).toMatchObject({ id: r.json.event_id, kind, device_id: r.json.device_id });
    }
  });

  it('lists the deliveries of the endpoint with their outcome', async () => {
    await until(async () => (await p.api('GET', `/v1/webhooks/${webhook.id}/deliveries?limit=200`)).json.data.every((d: Json) => d.state === 'delivered'));
    const list = await p.api('GET', `/v1/webhooks/${webhook.id}/deliveries?limit=200`);
    expect(list.json.data.length).toBe(rx.received.length);
    const one = list.json.data[0];
    expect(one).toMatchObject({ state: 'delivered', attempts: 1, last_status: 200 });
    const detail = await p.api('GET', `/v1/webhooks/${webhook.id}/deliveries/${one.id}`);
    expect(detail.json.attempt_log).toMatchObject([{ attempt: 1, status: 200, response_body_start: 'answered 200' }]);
  });

  it("never sends a customer's events to another customer's endpoint", async () => {
    const other = await p.newCustomer('Other Fleet');
    const otherRx = await startWebhookReceiver();
    try {
      const created = await other.api('POST', '/v1/webhooks', { url: otherRx.url, events: ['*'] });
      expect(created.status).toBe(201);
      const before = rx.received.length;
      const imei = imeiFrom('35209807600003');
      expect((await p.api('POST', '/v1/devices', { imei, model: 'FMB920', name: 'Late' })).status).toBe(201);
      await drive(encoders.teltonika, { imei, terminalId: '', serial: 0 }, [point(20, CENTRE.lat + 0.2)]);
      await until(() => rx.received.slice(before).some((r) => r.json.device_name === 'Late' && r.json.event === 'device.offline'));
      expect(otherRx.received).toEqual([]);
    } finally {
      await otherRx.close();
    }
  });

  it('signs with the new secret after a rotation, and with the previous one in -Previous during the grace period', async () => {
    const rotated = await p.api('POST', `/v1/webhooks/${webhook.id}/rotate-secret`, { grace_period_s: 3600 });
    expect(rotated.status).toBe(200);
    const before = rx.received.length;
    const imei = imeiFrom('35209807600004');
    expect((await p.api('POST', '/v1/devices', { imei, model: 'FMB920', name: 'Rotated' })).status).toBe(201);
    await drive(encoders.teltonika, { imei, terminalId: '', serial: 0 }, [point(30, CENTRE.lat + 0.3)]);
    await until(() => rx.received.slice(before).some((r) => r.json.device_name === 'Rotated'));
    const r: Received = rx.received.slice(before).find((x) => x.json.device_name === 'Rotated')!;
    expect(signatureValid(r, rotated.json.secret)).toBe(true);
    expect(signatureValid(r, webhook.secret)).toBe(false);
    expect(signatureValid(r, webhook.secret, 'x-service-signature-previous')).toBe(true);
  });
});
