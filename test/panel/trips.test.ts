/**
 * Trips in the panel, in Chromium against the whole platform: a planned drive
 * sent over TCP by a simulated Teltonika unit shows as the device page's trips
 * and stops (on the map and in lists), a trip plays back (the marker walks its
 * track), the day's exports download with the session cookie, and the fleet
 * list shows today's distance and driving time. Every wait is for a condition.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { systemClock } from '../../core/clock.js';
import { createCustomer } from '../../core/commands/customers.js';
import { SimulatedDevice } from '../simulator/device.js';
import { teltonikaEncoder } from '../simulator/encoders/teltonika.js';
import { PlannedRoute, type Leg } from '../simulator/planned-route.js';
import { simulatedIdentity } from '../simulator/run.js';
import { bearerApi, startPlatformHarness, type PlatformHarness } from '../support/platform-harness.js';
import { eventually } from '../support/wait.js';
import { hasChromium, launch, screenshotIfFailed, type Browser } from './browser.js';

const EMAIL = 'ops@trips.example';
const PASSWORD = 'correct horse battery staple';
const LONG = 240_000;
const WAIT = 90_000;
const LEGS: Leg[] = [
  { park_s: 300 },
  { drive_km: 5, speed_kmh: 50, heading_deg: 30 },
  { park_s: 600 },
  { drive_km: 3, speed_kmh: 40, heading_deg: 200 },
  { park_s: 400 },
];

let h: PlatformHarness;
let browser: Browser;
let page: Page;
let deviceId: string;
let plan: PlannedRoute;

describe.skipIf(!hasChromium)('trips in the panel', () => {
  beforeAll(async () => {
    h = await startPlatformHarness();
    const customer = await createCustomer(h.platform.store, systemClock, { name: 'Trips Haulage', plan: 'pro', first_user: { email: EMAIL, name: 'Ops', password: PASSWORD } });
    const api = bearerApi(h.base, customer.api_key);
    const identity = simulatedIdentity(57, 0);
    deviceId = (await api('POST', '/v1/devices', { imei: identity.imei, model: 'FMB920', name: 'Van 9' })).json.id;
    // An hour and a half ago, so every fix is in the past when it arrives.
    plan = new PlannedRoute({ startLat: 56.95, startLng: 24.1, startTime: Math.floor(Date.now() / 60_000) * 60_000 - 90 * 60_000, intervalS: 10, legs: LEGS });
    const source = plan.source();
    const unit = new SimulatedDevice({
      host: '127.0.0.1', port: h.platform.ports.teltonika!, encoder: teltonikaEncoder, ctx: { imei: identity.imei, terminalId: '' },
      route: source, pointsPerFrame: 10, ackTimeoutMs: 10_000, onAck: () => {},
    });
    while (source.remaining! > 0) await unit.step();
    unit.stop();
    await eventually(async () => ((await api('GET', `/v1/trips?device_id=${deviceId}`)).json.data.length === plan.trips.length ? true : undefined), 'trips');

    browser = await launch(h.base);
    page = await browser.context.newPage();
    await page.goto(`${h.base}/login`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Fleet', exact: true }).waitFor();
  }, LONG);

  afterEach((ctx) => screenshotIfFailed(ctx, page, 'trips-failed'));

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  }, LONG);

  const day = () => new Date(plan.trips[0]!.start).toISOString().slice(0, 10);

  it("lists the day's trips and stops, draws them, and plays a trip back along its track", async () => {
    await page.goto(`${h.base}/devices/${deviceId}?day=${day()}`);
    const trips = page.locator('.trip-list li');
    await expect.poll(() => trips.count(), { timeout: WAIT }).toBe(plan.trips.length);
    expect(await trips.first().textContent()).toContain('5.0 km');
    await expect.poll(() => page.locator('.stop-list li').count(), { timeout: WAIT }).toBe(plan.stops.length + 1);
    expect(await page.locator('path.stop-marker').count()).toBe(plan.stops.length + 1);

    await page.getByRole('button', { name: 'Play trip 1' }).click();
    const marker = page.locator('.playback-marker');
    await marker.waitFor();
    // The marker walks to the trip's last point.
    const last = plan.points.filter((p) => p.fixTime >= plan.trips[0]!.start && p.fixTime <= plan.trips[0]!.end!).length - 1;
    await expect.poll(() => marker.getAttribute('data-index'), { timeout: WAIT }).toBe(String(last));
    await page.getByRole('button', { name: 'Playing trip 1' }).click();
    await marker.waitFor({ state: 'detached' });
  }, LONG);

  it("offers the day's exports, which download with the session", async () => {
    await page.goto(`${h.base}/devices/${deviceId}?day=${day()}`);
    const links = page.locator('a.export');
    await expect.poll(() => links.count(), { timeout: WAIT }).toBe(5);
    const types: string[] = [];
    for (const href of await links.evaluateAll((els) => els.map((e) => e.getAttribute('href')!))) {
      const res = await page.request.get(h.base + href);
      expect(res.status(), href).toBe(200);
      types.push(res.headers()['content-type']!);
    }
    expect(types).toEqual(['text/csv; charset=utf-8', 'application/gpx+xml', 'application/vnd.google-earth.kml+xml', 'text/csv; charset=utf-8', 'text/csv; charset=utf-8']);
  }, LONG);

  it("shows today's distance and driving time in the fleet list", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const tripsToday = plan.trips.filter((t) => new Date(t.start).toISOString().slice(0, 10) === today);
    await page.goto(`${h.base}/fleet`);
    const row = page.locator(`.device-list li[data-device-id="${deviceId}"]`);
    await row.waitFor();
    if (tripsToday.length === 0) return; // run just after midnight UTC: the drive was yesterday's
    const km = tripsToday.reduce((n, t) => n + t.distance_m, 0) / 1000;
    await expect.poll(() => row.locator('.today').textContent(), { timeout: WAIT }).toContain(`Today ${km.toFixed(1)} km`);
  }, LONG);
});
