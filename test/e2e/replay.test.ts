/**
 * Read models are disposable: wiping them and replaying the store from the
 * start gives byte-identical API responses, and the detectors, re-deriving
 * every safety event and geofence crossing, append nothing new to the store.
 * Every response is also checked against the OpenAPI document.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app.js';
import { ReadModels } from '../../api/read-models.js';
import type { EventToAppend, RecordedEvent } from '../../core/event-store/port.js';
import type { AlarmReported, PositionRecorded } from '../../core/events.js';
import { randomUuid } from '../../core/ids.js';
import { imeiFrom } from '../../core/imei.js';
import { silentLogger } from '../../core/logger.js';
import { streams } from '../../core/streams.js';
import { ProjectionRunner, openReadModelDb, readModelProjections } from '../../projections/index.js';
import { runnerView } from '../../projections/view.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { ResponseValidator, loadOpenApi } from '../support/openapi.js';

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
    const post = async (url: string, payload: unknown) => {
      const res = await h.app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as { id: string };
    };
    const driver = await post('/v1/drivers', { name: 'Janis Ozols' });
    const device = await post('/v1/devices', { imei: imeiFrom('35693803564311'), model: 'FMB920', name: 'Van 3', driver_id: driver.id, speed_limit_kmh: 50 });
    const fence = await post('/v1/geofences', { name: 'Yard', center: { lat: LAT, lng: lngAt(600) }, radius_m: 150 });

    // 12 minutes east at one fix a second: through the yard, a hard brake, a stretch over 50 km/h, an SOS.
    const telemetry: Array<EventToAppend<PositionRecorded | AlarmReported>> = [];
    const kmhAt = (s: number) =>
      s < 100 ? 45 : s < 103 ? 45 - (s - 99) * 12 : s < 139 ? Math.min(45, 9 + (s - 102)) // brake, then 1 km/h/s back up
        : s < 280 ? 45 : s < 305 ? 45 + (s - 279) : s < 360 ? 70 : s < 385 ? 70 - (s - 359) : 45; // speeding, gently
    let m = 0;
    for (let s = 0; s < 720; s++) {
      const kmh = kmhAt(s);
      m += kmh / 3.6;
      telemetry.push({
        id: randomUuid(),
        type: 'PositionRecorded',
        data: {
          device_id: device.id, customer_id: customerId, protocol: 'teltonika', fix_time: T0 + s * 1000, received_at: T0 + s * 1000 + 300,
          valid: true, lat: LAT, lng: lngAt(m), speed_kmh: kmh, heading_deg: 90, altitude_m: 5, satellites: 9, ignition: true,
          odometer_m: Math.round(m), attributes: { io66: 12_600 },
        },
      });
    }
    telemetry.push({
      id: randomUuid(),
      type: 'AlarmReported',
      data: {
        device_id: device.id, customer_id: customerId, protocol: 'teltonika', kind: 'event.sos', occurred_at: T0 + 500_000,
        received_at: T0 + 500_400, level: null, position: { lat: LAT, lng: lngAt(5000), speed_kmh: 45, heading_deg: 90 }, details: { priority: 2 },
      },
    });
    for (let i = 0; i < telemetry.length; i += 50) await h.store.appendToStream(streams.telemetry(device.id), telemetry.slice(i, i + 50));
    await settle(h.runner);

    const derivedKinds = (await allEvents())
      .filter((e) => e.type === 'DeviceEventRaised')
      .map((e) => (e.data as { kind: string }).kind)
      .sort();
    expect(derivedKinds).toEqual(['event.harsh_brake', 'event.overspeed', 'event.sos', 'geofence.enter', 'geofence.exit']);

    const from = new Date(T0).toISOString();
    const firstEvent = (await h.app.inject({ method: 'GET', url: '/v1/events', headers })).json().data[0].id as string;
    // Every read of the API with real data, each with its path template in the OpenAPI document.
    const reads: Array<[string, string]> = [
      ['/v1/devices', '/v1/devices'],
      [`/v1/devices/${device.id}`, '/v1/devices/{id}'],
      ['/v1/positions/latest', '/v1/positions/latest'],
      [`/v1/positions?device_id=${device.id}&from=${from}&limit=1000`, '/v1/positions'],
      ['/v1/events?limit=200', '/v1/events'],
      [`/v1/events/${firstEvent}`, '/v1/events/{id}'],
      ['/v1/feed', '/v1/feed'],
      ['/v1/geofences', '/v1/geofences'],
      [`/v1/geofences/${fence.id}`, '/v1/geofences/{id}'],
      ['/v1/drivers', '/v1/drivers'],
      [`/v1/drivers/${driver.id}`, '/v1/drivers/{id}'],
      [`/v1/drivers/${driver.id}/score?from=2026-11-21&to=2026-11-22`, '/v1/drivers/{id}/score'],
    ];
    const documented = new ResponseValidator(await loadOpenApi(h.app));
    const capture = async (app: FastifyInstance) => {
      const bodies: string[] = [];
      for (const [url, template] of reads) {
        const res = await app.inject({ method: 'GET', url, headers });
        expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
        documented.check('GET', template, 200, res.json());
        bodies.push(res.body);
      }
      return bodies;
    };
    const before = await capture(h.app);
    const storedBefore = (await allEvents()).length;

    // Wipe: a new, empty read-model database; the runner replays the whole store into it.
    const db = openReadModelDb(join(dir, 'readmodels-rebuilt.sqlite'));
    const runner = new ProjectionRunner(h.store, db, readModelProjections, silentLogger);
    await runner.start();
    await settle(runner);
    const rebuilt = await buildApp(
      {
        store: h.store, clock: h.clock, readModels: new ReadModels(db), waitFor: (p) => runner.waitFor(p), catchUp: () => runner.catchUp(),
        projections: runnerView(runner, h.store, h.clock),
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
      db.close();
    }
  }, 60_000);
});
