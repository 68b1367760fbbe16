/**
 * Read models are disposable: wiping them and replaying the store from the
 * start gives byte-identical API responses, and the detectors, re-deriving
 * every safety event and geofence crossing, append nothing new to the store.
 * The scenario has what makes replays hard: two devices, a driver moved
 * between vehicles mid-drive, fixes that arrive late, a geofence deleted while
 * a device is inside it, keys and OAuth clients created and revoked. Every
 * response is also checked against the OpenAPI document.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app.js';
import type { EventToAppend, RecordedEvent } from '../../core/event-store/port.js';
import type { AlarmReported, PositionRecorded } from '../../core/events.js';
import { imeiFrom } from '../../core/imei.js';
import { silentLogger } from '../../core/logger.js';
import { streams } from '../../core/streams.js';
import { historyItemJson } from '../../api/history-item.js';
import { ProjectionRunner, openHistoryReads, openReadModelDb, readModelProjections, startHistory } from '../../projections/index.js';
import { runnerView } from '../../projections/view.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { ResponseValidator, loadOpenApi } from '../support/openapi.js';
import { alarmReported, positionRecorded, type DeviceRef } from '../support/store-events.js';

let h: ApiHarness;
const dir = mkdtempSync(join(tmpdir(), 'fleet-replay-'));
beforeAll(async () => {
  h = await startApiHarness();
});
afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 10, 21, 6, 0, 0);
const LAT = 56.95;
const lngAt = (m: number) => 24.0 + m / (111_320 * Math.cos((LAT * Math.PI) / 180));

async function allEvents(): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for (;;) {
    const batch = await h.store.readAll({ ...(out.length ? { after: out[out.length - 1]!.position } : {}), maxCount: 1000 });
    if (batch.length === 0) return out;
    out.push(...batch);
  }
}

/** Waits until the detectors' derived events have made their round trip and nothing more arrives. */
async function settle(runner: ProjectionRunner): Promise<void> {
  let last = -1;
  for (let stable = 0; stable < 5; ) {
    await runner.catchUp();
    await new Promise((r) => setTimeout(r, 20));
    const n = (await allEvents()).length;
    stable = n === last ? stable + 1 : 0;
    last = n;
  }
}

describe('replaying the store into empty read models', () => {
  it('gives byte-identical API responses and appends no duplicate derived events', async () => {
    const { customerId, apiKey } = await h.newCustomer('Replay Freight');
    const headers = { authorization: `Bearer ${apiKey}` };
    const send = async (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) => {
      const res = await h.app.inject({ method, url, headers, ...(payload ? { payload: payload as Record<string, unknown> } : {}) });
      expect(res.statusCode, res.body).toBe(method === 'POST' ? 201 : method === 'PATCH' ? 200 : 204);
      return (res.statusCode === 204 ? {} : res.json()) as { id: string; client_id: string };
    };
    const append = async (deviceId: string, events: Array<EventToAppend<PositionRecorded | AlarmReported>>) => {
      for (let i = 0; i < events.length; i += 50) await h.store.appendToStream(streams.telemetry(deviceId), events.slice(i, i + 50));
    };
    const driver = await send('POST', '/v1/drivers', { name: 'Janis Ozols' });
    const second = await send('POST', '/v1/drivers', { name: 'Liga Berzina', external_id: 'LB-7' });
    const device = await send('POST', '/v1/devices', { imei: imeiFrom('35693803564311'), model: 'FMB920', name: 'Van 3', driver_id: driver.id, speed_limit_kmh: 50 });
    const other = await send('POST', '/v1/devices', { imei: imeiFrom('35693803564329'), model: 'FMC130', name: 'Van 4', group_id: 'north', driver_id: second.id });
    const fence = await send('POST', '/v1/geofences', { name: 'Yard', center: { lat: LAT, lng: lngAt(600) }, radius_m: 150 });
    // Van 4 drives along a parallel 0.01 degrees north, through "Gate" and into "Parking", where it stops.
    const box = (fromM: number, toM: number) => ({
      type: 'Polygon',
      coordinates: [[[lngAt(fromM), LAT + 0.009], [lngAt(toM), LAT + 0.009], [lngAt(toM), LAT + 0.011], [lngAt(fromM), LAT + 0.011], [lngAt(fromM), LAT + 0.009]]],
    });
    const gate = await send('POST', '/v1/geofences', { name: 'Gate', geometry: box(500, 700) });
    const parking = await send('POST', '/v1/geofences', { name: 'Parking', geometry: { type: 'Feature', properties: {}, geometry: box(3000, 3600) } });
    // A minute parked inside is a dwell (Van 4 stays two).
    await send('PATCH', `/v1/geofences/${parking.id}`, { dwell_s: 60 });
    const key = await send('POST', '/v1/api-keys', { name: 'Dashboard', scopes: ['positions:read'] });
    await send('POST', '/v1/api-keys', { name: 'Old script', scopes: ['events:read'] }).then((k) => send('DELETE', `/v1/api-keys/${k.id}`));
    const client = await send('POST', '/v1/oauth/clients', { name: 'Integrator', scopes: ['devices:read', 'events:read'] });
    await send('POST', '/v1/oauth/clients', { name: 'Gone', scopes: ['devices:read'] }).then((c) => send('DELETE', `/v1/oauth/clients/${c.client_id}`));

    // Van 3: 12 minutes east at one fix a second: through the yard, a hard brake, a stretch over 50 km/h, an SOS.
    const van3: DeviceRef = { customerId, deviceId: device.id };
    const telemetry: Array<EventToAppend<PositionRecorded | AlarmReported>> = [];
    const kmhAt = (s: number) =>
      s < 100 ? 45 : s < 103 ? 45 - (s - 99) * 12 : s < 139 ? Math.min(45, 9 + (s - 102)) // brake, then 1 km/h/s back up
        : s < 280 ? 45 : s < 305 ? 45 + (s - 279) : s < 360 ? 70 : s < 385 ? 70 - (s - 359) : 45; // speeding, gently
    let m = 0;
    for (let s = 0; s < 720; s++) {
      const kmh = kmhAt(s);
      m += kmh / 3.6;
      telemetry.push(fix(van3, T0 + s * 1000, LAT, lngAt(m), kmh, m));
    }
    telemetry.push(alarmReported(van3, T0 + 500_000, 'event.sos', { position: { lat: LAT, lng: lngAt(5000), speed_kmh: 45, heading_deg: 90 } }));
    await append(device.id, telemetry.slice(0, 400));

    // Van 4: 40 km/h for 5 minutes, slowing gently to park; a minute of its fixes arrives late, after the rest.
    const van4: DeviceRef = { customerId, deviceId: other.id };
    const vanFour: Array<EventToAppend<PositionRecorded>> = [];
    let m4 = 0;
    for (let s = 0; s < 400; s++) {
      const kmh = Math.max(0, Math.min(40, (310 - s) * 4));
      m4 += kmh / 3.6;
      vanFour.push(fix(van4, T0 + s * 1000, LAT + 0.01, lngAt(m4), kmh, m4));
    }
    const late = vanFour.splice(120, 60);
    await append(other.id, vanFour.slice(0, 200));
    await settle(h.runner);
    // Mid-drive, Janis moves to Van 4 and Van 3 goes on without a driver.
    await send('PATCH', `/v1/devices/${device.id}`, { driver_id: null });
    await send('PATCH', `/v1/devices/${other.id}`, { driver_id: driver.id });
    await append(device.id, telemetry.slice(400));
    await append(other.id, vanFour.slice(200));
    await append(other.id, late);
    await settle(h.runner);
    // Van 4 is parked inside "Parking" when it is deleted: no exit, and 404 from then on.
    await send('DELETE', `/v1/geofences/${parking.id}`);
    await settle(h.runner);
    // Webhook endpoints: one edited and its secret rotated, one deleted (gone from the rebuilt read model too).
    const hook = await send('POST', '/v1/webhooks', { url: 'https://hooks.example.com/a', events: ['geofence.*'], device_ids: [other.id] });
    const gone = await send('POST', '/v1/webhooks', { url: 'https://hooks.example.com/b', events: ['*'] });
    await send('PATCH', `/v1/webhooks/${hook.id}`, { events: ['geofence.*', 'event.sos'], description: 'Dispatch', enabled: false });
    const rotated = await h.app.inject({ method: 'POST', url: `/v1/webhooks/${hook.id}/rotate-secret`, headers, payload: { grace_period_s: 600 } });
    expect(rotated.statusCode, rotated.body).toBe(200);
    await send('DELETE', `/v1/webhooks/${gone.id}`);
    // Commands: one queued, one cancelled, and the device's own engine text.
    await send('PATCH', `/v1/devices/${device.id}`, { command_texts: { engine_stop: 'setdigout 1 0 60' } });
    const queuedCommand = await h.app.inject({ method: 'POST', url: `/v1/devices/${device.id}/commands`, headers, payload: { type: 'set_report_interval', params: { interval_s: 30 } } });
    const cancelledCommand = await h.app.inject({ method: 'POST', url: `/v1/devices/${device.id}/commands`, headers, payload: { type: 'engine_stop' } });
    expect([queuedCommand.statusCode, cancelledCommand.statusCode]).toEqual([202, 202]);
    expect((await h.app.inject({ method: 'DELETE', url: `/v1/commands/${cancelledCommand.json().id}`, headers })).statusCode).toBe(200);

    const derived = (await allEvents())
      .filter((e) => e.type === 'DeviceEventRaised')
      .map((e) => e.data as { kind: string; device_id: string; fields: { geofence_name?: string } });
    expect(derived.filter((e) => e.device_id === device.id).map((e) => e.kind).sort())
      .toEqual(['event.harsh_brake', 'event.overspeed', 'event.sos', 'geofence.enter', 'geofence.exit']);
    expect(derived.filter((e) => e.device_id === other.id).map((e) => `${e.kind} ${e.fields.geofence_name}`))
      .toEqual(['geofence.enter Gate', 'geofence.exit Gate', 'geofence.enter Parking', 'geofence.dwell Parking']);

    const from = new Date(T0).toISOString();
    const to = new Date(T0 + 3_600_000).toISOString();
    const events = (await h.app.inject({ method: 'GET', url: '/v1/events?limit=200', headers })).json().data as Array<{ id: string }>;
    const firstPage = (await h.app.inject({ method: 'GET', url: '/v1/events?limit=3', headers })).json().pagination.next_cursor as string;
    const feedPage = (await h.app.inject({ method: 'GET', url: '/v1/feed?limit=2', headers })).json().pagination.next_cursor as string;
    // Every read of the API with real data, each with its path template in the OpenAPI document.
    const reads: Array<[string, string]> = [
      ['/v1/devices', '/v1/devices'],
      ['/v1/devices?group_id=north&status=never_connected', '/v1/devices'],
      [`/v1/devices/${device.id}`, '/v1/devices/{id}'],
      [`/v1/devices/${other.id}`, '/v1/devices/{id}'],
      ['/v1/positions/latest', '/v1/positions/latest'],
      ['/v1/positions/latest?group_id=north', '/v1/positions/latest'],
      [`/v1/positions?device_id=${device.id}&from=${from}&to=${to}&limit=1000`, '/v1/positions'],
      [`/v1/positions?device_id=${other.id}&from=${from}&to=${to}&limit=1000&order=desc`, '/v1/positions'],
      ['/v1/events?limit=200', '/v1/events'],
      ['/v1/events?limit=3', '/v1/events'],
      [`/v1/events?limit=3&cursor=${firstPage}`, '/v1/events'],
      [`/v1/events?kind=geofence.*&device_id=${other.id}&order=asc`, '/v1/events'],
      [`/v1/events?severity=critical,high&from=${from}&to=${to}`, '/v1/events'],
      ...events.map((e): [string, string] => [`/v1/events/${e.id}`, '/v1/events/{id}']),
      ['/v1/feed?limit=2', '/v1/feed'],
      [`/v1/feed?limit=2&cursor=${feedPage}`, '/v1/feed'],
      ['/v1/feed?limit=200', '/v1/feed'],
      ['/v1/geofences', '/v1/geofences'],
      [`/v1/geofences/${fence.id}`, '/v1/geofences/{id}'],
      [`/v1/geofences/${gate.id}`, '/v1/geofences/{id}'],
      [`/v1/geofences/${parking.id}`, '/v1/geofences/{id}'],
      ['/v1/drivers', '/v1/drivers'],
      [`/v1/drivers/${driver.id}`, '/v1/drivers/{id}'],
      [`/v1/drivers/${second.id}`, '/v1/drivers/{id}'],
      [`/v1/drivers/${driver.id}/score?from=2026-11-21&to=2026-11-22`, '/v1/drivers/{id}/score'],
      [`/v1/drivers/${second.id}/score?from=2026-11-15&to=2026-11-23`, '/v1/drivers/{id}/score'],
      ['/v1/api-keys', '/v1/api-keys'],
      ['/v1/oauth/clients', '/v1/oauth/clients'],
      ['/v1/webhooks', '/v1/webhooks'],
      [`/v1/webhooks/${hook.id}`, '/v1/webhooks/{id}'],
      [`/v1/webhooks/${gone.id}`, '/v1/webhooks/{id}'],
      [`/v1/devices/${device.id}/commands`, '/v1/devices/{id}/commands'],
      [`/v1/devices/${device.id}/command-types`, '/v1/devices/{id}/command-types'],
      [`/v1/commands/${queuedCommand.json().id}`, '/v1/commands/{id}'],
      [`/v1/commands/${cancelledCommand.json().id}`, '/v1/commands/{id}'],
      ['/v1/trips', '/v1/trips'],
      ['/v1/stops', '/v1/stops'],
      ['/v1/idling', '/v1/idling'],
      [`/v1/devices/${device.id}/accumulators`, '/v1/devices/{id}/accumulators'],
      [`/v1/devices/${other.id}/accumulators`, '/v1/devices/{id}/accumulators'],
      ['/v1/settings/trips', '/v1/settings/trips'],
    ];
    expect(events.length).toBe(9);
    const documented = new ResponseValidator(await loadOpenApi(h.app));
    const capture = async (app: FastifyInstance) => {
      const answers: string[] = [];
      for (const [url, template] of reads) {
        const res = await app.inject({ method: 'GET', url, headers });
        expect(res.statusCode === 200 || url.endsWith(parking.id) || url.endsWith(gone.id), `${url}: ${res.body}`).toBe(true);
        documented.check('GET', template, res.statusCode, res.json());
        // A problem's request_id names the request, not the data.
        answers.push(`${res.statusCode} ${res.body.replace(/"request_id":"[^"]*"/, '"request_id":"-"')}`);
      }
      return answers;
    };
    const before = await capture(h.app);
    expect(before.join('\n')).toContain(key.id);
    expect(before.join('\n')).toContain(client.client_id);
    expect(before.join('\n')).toContain('"status":"disabled","disabled_reason":null');
    const storedBefore = (await allEvents()).length;

    // Wipe: a new, empty read-model database; the runner replays the whole store into it.
    const db = openReadModelDb(join(dir, 'readmodels-rebuilt.sqlite'));
    const runner = new ProjectionRunner(h.store, db, readModelProjections(), silentLogger);
    await runner.start();
    await settle(runner);
    const history = await startHistory(h.store, join(dir, 'history-rebuilt.sqlite'), historyItemJson, silentLogger);
    const historyReads = openHistoryReads(join(dir, 'history-rebuilt.sqlite'));
    const rebuilt = await buildApp(
      {
        store: h.store, clock: h.clock, readModelDb: db, historyDbPath: join(dir, 'history-rebuilt.sqlite'), secretBox: h.secretBox, waitFor: (p) => runner.waitFor(p),
        catchUp: () => runner.catchUp(), projections: runnerView(runner, historyReads, h.store, h.clock),
      },
      silentLogger,
    );
    try {
      const after = await capture(rebuilt);
      for (const [i, [url]] of reads.entries()) expect(after[i], url).toBe(before[i]);
      expect((await allEvents()).length).toBe(storedBefore);
    } finally {
      await rebuilt.close();
      await runner.stop();
      await history.stop();
      historyReads.close();
      db.close();
    }
  }, 60_000);
});

/** A fix heading east at `kmh`, `m` metres on the odometer. */
function fix(device: DeviceRef, t: number, lat: number, lng: number, kmh: number, m: number): EventToAppend<PositionRecorded> {
  return positionRecorded(device, t, { lat, lng, speed_kmh: kmh, odometer_m: Math.round(m) });
}
