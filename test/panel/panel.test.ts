/**
 * The customer panel in a real browser (Debian's Chromium through
 * playwright-core) against the whole platform on ephemeral ports: log in,
 * a live device moving on the map (real Teltonika frames over TCP), drawing a
 * geofence with the mouse, an API key that works, a webhook test that reaches
 * a local receiver with a valid signature, secrets gone from the page after
 * their one display, one customer's session never reading another's data,
 * and screenshots of every page at laptop and phone sizes (test/artifacts/).
 * Every wait is for a condition, never for a time.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { systemClock } from '../../core/clock.js';
import { createCustomer } from '../../core/commands/customers.js';
import { imeiFrom } from '../../core/imei.js';
import { protocols } from '../../gateway/protocols/index.js';
import { teltonikaEncoder } from '../simulator/encoders/teltonika.js';
import type { EncodeContext, SimPoint } from '../simulator/encoders/types.js';
import { nextFrame } from '../support/command-unit.js';
import { loadFrames } from '../support/conformance.js';
import { login, sendPoints, until } from '../support/device-login.js';
import { bearerApi, startPlatformHarness, type Api, type PlatformHarness } from '../support/platform-harness.js';
import { TcpClient } from '../support/tcp-client.js';
import { signatureValid, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { hasChromium, launch, pageText, screenshotIfFailed, screenshots, type Browser } from './browser.js';

const PASSWORD = 'correct horse battery staple';
const A_EMAIL = 'ops@acme.example';
const B_EMAIL = 'ops@rival.example';
/** A test's limit; every wait inside it is shorter (WAIT), so a failure names what it waited for. */
const LONG = 240_000;
const WAIT = 90_000;


let h: PlatformHarness;
let browser: Browser;
let page: Page;
let receiver: WebhookReceiver;
let apiA: Api;
let bGeofenceId: string;
let deviceId = '';
const pageErrors: string[] = [];
const device: { client: TcpClient | null; ctx: EncodeContext; serial: number } = {
  client: null,
  ctx: { imei: imeiFrom('35693803564380'), terminalId: '', serial: 1 },
  serial: 1,
};

const bearer = (key: string): Api => bearerApi(h.base, key);

/** One fix over the device's TCP session (a real Teltonika AVL frame), acknowledged by the gateway. */
async function sendFix(lat: number, lng: number, secondsAgo: number, alarm?: SimPoint['alarm']): Promise<void> {
  const point: SimPoint = {
    fixTime: Date.now() - secondsAgo * 1000,
    lat,
    lng,
    speedKmh: 40,
    headingDeg: 90,
    altitudeM: 10,
    satellites: 9,
    ignition: true,
    odometerM: 1000,
    ...(alarm ? { alarm } : {}),
  };
  const { frame, reply } = await sendPoints(device.client!, teltonikaEncoder, { ...device.ctx, serial: ++device.serial }, [point]);
  expect(teltonikaEncoder.isAck(reply, frame, 1)).toBe(true);
}

/** Whether the page's DOM (markup and input values) contains `text` anywhere. */
const inPage = async (p: Page, text: string) => (await pageText(p)).includes(text);

/** Waits until no secret dialog is left in the DOM (role locators skip a closed dialog that is still there: CSS does not). */
const secretGone = (p: Page) => p.locator('dialog, #secret-value').first().waitFor({ state: 'detached' });

describe.skipIf(!hasChromium)('customer panel in Chromium', () => {
  beforeAll(async () => {
    h = await startPlatformHarness({ FLEET_WEBHOOK_ALLOW_PRIVATE: 'true' });
    const a = await createCustomer(h.platform.store, systemClock, { name: 'Acme Haulage', plan: 'pro', first_user: { email: A_EMAIL, name: 'Acme ops', password: PASSWORD } });
    const b = await createCustomer(h.platform.store, systemClock, { name: 'Rival Freight', plan: 'pro', first_user: { email: B_EMAIL, name: 'Rival ops', password: PASSWORD } });
    apiA = bearer(a.api_key);
    const apiB = bearer(b.api_key);
    const fence = await apiB('POST', '/v1/geofences', { name: 'Rival depot (private)', center: { lat: 48.2, lng: 16.4 }, radius_m: 300 });
    expect(fence.status).toBe(201);
    bGeofenceId = fence.json.id as string;
    receiver = await startWebhookReceiver();
    browser = await launch(h.base);
    page = await browser.context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
  }, LONG);

  afterEach((ctx) => screenshotIfFailed(ctx, page, 'failed'));

  afterAll(async () => {
    device.client?.close();
    await browser?.close();
    await receiver?.close();
    await h?.close();
  }, LONG);

  it('logs in: a wrong password shows the API\'s message, the right one opens the fleet page', async () => {
    await page.goto(`${h.base}/settings/api`);
    await page.waitForURL(/\/login\?next=/);
    await page.getByLabel('Email').fill(A_EMAIL);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: WAIT }).toContain('The email or password is wrong.');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    // Back where the visitor was going, logged in as Acme.
    await page.getByRole('heading', { name: 'API access' }).waitFor();
    expect(await page.locator('.who .user').textContent()).toBe('Acme Haulage');
    await page.getByRole('link', { name: 'Fleet', exact: true }).first().click();
    await page.getByRole('heading', { name: 'Fleet', exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/fleet');
  }, LONG);

  it('moves a simulated device\'s marker on the live map as its frames arrive over TCP', async () => {
    const created = await apiA('POST', '/v1/devices', { imei: device.ctx.imei, model: 'FMB920', name: 'Van 7' });
    expect(created.status).toBe(201);
    deviceId = created.json.id as string;
    device.client = await TcpClient.open(h.platform.ports.teltonika!);
    await login(device.client, teltonikaEncoder, device.ctx);
    await sendFix(56.95, 24.1, 2 * 3600);
    await until(async () => (await apiA('GET', `/v1/devices/${deviceId}`)).json.latest_position?.lat === 56.95, 60_000, 'first fix in the read model');

    await page.goto(`${h.base}/fleet`);
    const marker = page.locator(`.device-marker[data-device-id="${deviceId}"]`);
    await expect.poll(() => marker.getAttribute('data-lat'), { timeout: WAIT }).toBe('56.95');
    await page.locator('.live-state', { hasText: 'Live' }).waitFor();
    // No tile URL configured: the bundled world outline is the whole base map (vector paths, no tile images).
    expect(await page.locator('img.leaflet-tile').count()).toBe(0);
    expect(await page.locator('.leaflet-outline-pane path').count()).toBeGreaterThan(100);
    const before = await marker.boundingBox();

    // Far enough to show at any zoom the map picks (tens of km: the outline-only map stops at country level).
    await sendFix(57.45, 24.9, 100 * 60);
    await expect.poll(() => marker.getAttribute('data-lat'), { timeout: WAIT }).toBe('57.45');
    expect(await marker.getAttribute('data-lng')).toBe('24.9');
    const after = await marker.boundingBox();
    expect(before && after).toBeTruthy();
    // North-east: up and to the right on the screen, without a reload.
    expect(after!.y).toBeLessThan(before!.y);
    expect(after!.x).toBeGreaterThan(before!.x);
    await expect.poll(() => page.locator(`.device-list li[data-device-id="${deviceId}"] .badge`).textContent(), { timeout: WAIT }).toBe('Online');
  }, LONG);

  it("sends a command from the device page's command types, and its status changes live", async () => {
    await page.goto(`${h.base}/devices/${deviceId}`);
    const section = page.locator('#device-commands');
    await section.getByLabel('Command', { exact: true }).selectOption('set_report_interval');
    await section.getByLabel('interval_s').fill('60');
    await section.getByRole('button', { name: 'Send' }).click();
    const item = section.locator('li', { hasText: 'set report interval' });
    // The unit is online: the gateway writes the command to it, and the page hears `sent` on the stream, without a reload.
    const written = await nextFrame(device.client!, protocols.teltonika);
    expect(written.toString('latin1')).toContain('setparam 10050:60');
    await expect.poll(() => item.locator('.badge').textContent(), { timeout: WAIT }).toBe('sent');
    const listed = await apiA('GET', `/v1/devices/${deviceId}/commands`);
    const command = listed.json.data[0];
    expect(command).toMatchObject({ type: 'set_report_interval', params: { interval_s: 60 }, status: 'sent' });

    // A second one waits behind it (a Teltonika unit has one command in flight), so it can still be cancelled.
    await section.getByLabel('Command', { exact: true }).selectOption('reboot');
    await section.getByRole('button', { name: 'Send' }).click();
    const reboot = section.locator('li', { hasText: 'reboot' });
    await expect.poll(() => reboot.locator('.badge').textContent(), { timeout: WAIT }).toBe('queued');
    await reboot.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => reboot.locator('.badge').textContent(), { timeout: WAIT }).toBe('cancelled');

    // The unit's answer (a real codec 12 reply, corpus #40) makes the first one succeeded, live.
    device.client!.send(Buffer.from(loadFrames()[40]!.hex, 'hex'));
    await expect.poll(() => section.locator(`li[data-command="${command.id}"] .badge`).textContent(), { timeout: WAIT }).toBe('succeeded');
    // A Teltonika unit has no driver display: the page does not offer text.
    expect(await section.getByLabel('Command', { exact: true }).locator('option').allTextContents()).not.toContain('text');
  }, LONG);

  it('draws a polygon geofence with mouse clicks on the map, names it, and it is in GET /v1/geofences', async () => {
    await page.goto(`${h.base}/geofences`);
    await page.getByRole('heading', { name: 'Geofences' }).waitFor();
    await page.locator('.leaflet-pm-icon-polygon').click();
    const box = (await page.locator('#geofence-map').boundingBox())!;
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    const corners: [number, number][] = [
      [cx - 90, cy - 60],
      [cx + 90, cy - 60],
      [cx + 60, cy + 70],
      [cx - 70, cy + 60],
    ];
    for (const [x, y] of corners) await page.mouse.click(x, y);
    await page.mouse.click(corners[0]![0], corners[0]![1]); // on the first vertex: closes the ring
    await page.getByLabel('Name').fill('North yard');
    await page.getByRole('button', { name: 'Save geofence' }).click();
    await page.locator('.fence-list li', { hasText: 'North yard' }).waitFor();

    const list = await apiA('GET', '/v1/geofences');
    const fence = (list.json.data as { name: string; shape: string; geometry: { coordinates: number[][][] } }[]).find((f) => f.name === 'North yard');
    expect(fence?.shape).toBe('polygon');
    expect(fence!.geometry.coordinates[0]).toHaveLength(5); // four corners, closed
    await screenshots(page, 'geofences');

    // A circle typed in, then deleted after the confirmation: permanent.
    await page.getByText('Add a circle by coordinates').click();
    await page.getByLabel('Centre latitude').fill('56.95');
    await page.getByLabel('Centre longitude').fill('24.1');
    await page.getByLabel('Radius (m)').fill('250');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByLabel('Name').fill('Depot circle');
    await page.getByLabel(/Dwell alert after/).fill('15');
    await page.getByRole('button', { name: 'Save geofence' }).click();
    const item = page.locator('.fence-list li', { hasText: 'Depot circle' });
    await item.waitFor();
    expect(await item.textContent()).toContain('dwell alert after 15 min');
    const saved = (await apiA('GET', '/v1/geofences')).json.data as { name: string; dwell_s: number | null }[];
    expect(saved.find((f) => f.name === 'Depot circle')!.dwell_s).toBe(900);
    await item.getByRole('button', { name: /Delete/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete permanently' }).click();
    await item.waitFor({ state: 'detached' });
    const after = await apiA('GET', '/v1/geofences');
    expect((after.json.data as { name: string }[]).map((f) => f.name)).toEqual(['North yard']);
  }, LONG);

  it('creates an API key whose secret is shown once, works as a Bearer token, and is gone from the page after the dialog', async () => {
    await page.goto(`${h.base}/settings/api`);
    await page.getByLabel('Name').first().fill('Dispatch integration');
    await page.getByLabel('Choose scopes').first().check();
    await page.getByLabel('devices:read').first().check();
    await page.getByLabel('geofences:read').first().check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'API key created' });
    const secret = await dialog.locator('input.secret').inputValue();
    expect(secret).toMatch(/^fleet_key_/);

    const devices = await fetch(`${h.base}/v1/devices`, { headers: { authorization: `Bearer ${secret}` } });
    expect(devices.status).toBe(200);
    expect(((await devices.json()) as { data: { id: string }[] }).data.map((d) => d.id)).toEqual([deviceId]);
    const refused = await fetch(`${h.base}/v1/webhooks`, { headers: { authorization: `Bearer ${secret}` } });
    expect(refused.status).toBe(403); // only the scopes chosen

    await dialog.getByRole('button', { name: /close/ }).click();
    await dialog.waitFor({ state: 'detached' });
    await secretGone(page);
    expect(await inPage(page, secret)).toBe(false);
    const row = page.locator('tr', { hasText: 'Dispatch integration' });
    await expect.poll(() => row.textContent(), { timeout: WAIT }).toContain('devices:read, geofences:read');

    // An OAuth client's secret leaves the page when the dialog is dismissed with Escape too.
    await page.getByLabel('Name').nth(1).fill('Reporting');
    await page.getByRole('button', { name: 'Create client' }).click();
    const clientDialog = page.getByRole('dialog', { name: 'OAuth client created' });
    const clientSecret = await clientDialog.locator('input.secret').inputValue();
    expect(clientSecret.length).toBeGreaterThan(20);
    await page.keyboard.press('Escape');
    await clientDialog.waitFor({ state: 'detached' });
    await secretGone(page);
    expect(await inPage(page, clientSecret)).toBe(false);
    const clientId = (await page.locator('tr', { hasText: 'Reporting' }).locator('code').textContent())!;
    const token = await fetch(`${h.base}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
    });
    expect(token.status).toBe(200);
    expect(((await token.json()) as { scope: string }).scope.split(' ').sort()).toEqual(['commands:read', 'devices:read', 'drivers:read', 'events:read', 'geofences:read', 'positions:read', 'webhooks:read']);

    // Revoking the key (after a confirmation) ends it at once.
    await row.getByRole('button', { name: /Revoke/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await row.locator('.badge', { hasText: 'revoked' }).waitFor();
    expect((await fetch(`${h.base}/v1/devices`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(401);
    await screenshots(page, 'settings-api');
  }, LONG);

  it('configures a webhook to a local receiver, sends a test, and the receiver gets a delivery whose signature verifies', async () => {
    await page.goto(`${h.base}/settings/webhooks`);
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('Description').fill('Dispatch desk');
    await page.getByLabel('geofence.*').check();
    await page.getByLabel('event.sos').check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'Webhook created' });
    const secret = await dialog.locator('input.secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await dialog.getByRole('button', { name: /close/ }).click();
    await dialog.waitFor({ state: 'detached' });
    await secretGone(page);
    expect(await inPage(page, secret)).toBe(false);

    await page.getByRole('button', { name: 'Send test' }).click();
    await expect.poll(() => page.locator('.test-status').textContent(), { timeout: WAIT }).toBe('200');
    expect(await page.locator('.test-body').textContent()).toBe('answered 200');
    const [delivery] = await receiver.waitFor(1, WAIT);
    expect(delivery!.headers['x-service-event']).toBe('event.sos');
    expect(signatureValid(delivery!, secret)).toBe(true);
    // A test is sent outside the queue: it is not in the delivery log (the SOS below is).

    // A rotated secret is shown once too; leaving the page while it is shown takes it away.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
    const rotated = page.getByRole('dialog', { name: 'Secret rotated' });
    const newSecret = await rotated.locator('input.secret').inputValue();
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(secret);
    // Another page while the dialog is open (history navigation, as Back/Forward do).
    await page.evaluate("history.pushState(null, '', '/events'); dispatchEvent(new PopStateEvent('popstate'))");
    await page.getByRole('heading', { name: 'Events' }).waitFor();
    await rotated.waitFor({ state: 'detached' });
    await secretGone(page);
    expect(await inPage(page, newSecret)).toBe(false);
    await page.goBack();
    await page.getByRole('heading', { name: 'Dispatch desk' }).waitFor();
  }, LONG);

  it("never shows another customer's data to a session: B's geofence is neither listed nor readable", async () => {
    await page.goto(`${h.base}/geofences`);
    await page.locator('.fence-list li', { hasText: 'North yard' }).waitFor();
    expect(await inPage(page, 'Rival depot')).toBe(false);
    const status = await page.evaluate(async (id) => (await fetch(`/v1/geofences/${id}`)).status, bGeofenceId);
    expect(status).toBe(404);
  }, LONG);

  it('works by keyboard: a skip link, a visible focus ring, navigation with Enter, and a label for every field', async () => {
    const active = () => page.evaluate<string>("(document.activeElement.id || '') + '|' + document.activeElement.className + '|' + document.activeElement.textContent.trim()");
    const ringShown = () => page.evaluate<boolean>("(() => { const s = getComputedStyle(document.activeElement); return s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2; })()");
    await page.goto(`${h.base}/fleet`);
    await page.getByRole('heading', { name: 'Fleet', exact: true }).waitFor();
    await page.keyboard.press('Tab');
    expect(await active()).toMatch(/^\|skip-link\|Skip to content$/);
    expect(await ringShown()).toBe(true);
    await page.keyboard.press('Enter');
    expect(await active()).toMatch(/^main\|/);

    await page.goto(`${h.base}/fleet`);
    await page.getByRole('heading', { name: 'Fleet', exact: true }).waitFor();
    for (let i = 0; i < 8 && !(await active()).endsWith('|Events'); i++) await page.keyboard.press('Tab'); // skip link, brand, Fleet, Events
    expect(await active()).toMatch(/\|Events$/);
    expect(await ringShown()).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Events' }).waitFor();
    await expect.poll(active, { timeout: WAIT }).toMatch(/^main\|/); // the new page's content has the focus

    const unlabelled = () =>
      page.evaluate<string[]>(
        "[...document.querySelectorAll('input:not([type=hidden]), select, textarea')].filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map((e) => e.id || e.name || e.outerHTML.slice(0, 80))",
      );
    for (const path of ['/fleet', '/events', '/geofences', '/drivers', '/settings/api', '/settings/webhooks', `/devices/${deviceId}`]) {
      await page.goto(h.base + path);
      await page.locator('main h1').waitFor();
      expect([path, await unlabelled()]).toEqual([path, []]);
    }
  }, LONG);

  it('shows every page at laptop and phone sizes (screenshots) with no request to another origin', async () => {
    // A driver in the cab, then a drive east (60 km in 80 min, a harsh brake on the way) and an SOS:
    // a scored day for the driver's chart, a track and events for the device and events pages.
    const driver = await apiA('POST', '/v1/drivers', { name: 'Ilze Ozola', external_id: 'EMP-17' });
    expect(driver.status).toBe(201);
    expect((await apiA('PATCH', `/v1/devices/${deviceId}`, { driver_id: driver.json.id })).status).toBe(200);
    for (let i = 1; i <= 10; i++) await sendFix(57.45, 24.9 + 0.1 * i, (100 - 8 * i) * 60, i === 5 ? 'event.harsh_brake' : undefined);
    await sendFix(57.451, 25.902, 60, 'event.sos');
    await until(async () => (await apiA('GET', '/v1/events')).json.data.length >= 2, 60_000, 'the harsh brake and the SOS in the read model');
    const sosEvent = (await apiA('GET', '/v1/events?kind=event.sos')).json.data[0] as { id: string; occurred_at: string };
    const eventId = sosEvent.id;
    const driven = async () =>
      ((await apiA('GET', `/v1/drivers/${driver.json.id}/score`)).json.data as { distance_km: number }[]).reduce((sum, d) => sum + d.distance_km, 0);
    await until(async () => (await driven()) > 50, 60_000, "the drive in the driver's daily scores");

    await page.goto(`${h.base}/fleet`);
    await page.locator(`.device-marker[data-device-id="${deviceId}"]`).waitFor();
    await screenshots(page, 'fleet');

    await page.getByRole('link', { name: 'Van 7' }).click();
    await page.getByRole('heading', { name: 'Van 7' }).waitFor();
    await page.goto(`${h.base}/devices/${deviceId}?day=${sosEvent.occurred_at.slice(0, 10)}`); // the SOS's UTC day (a run just after midnight)
    await page.getByRole('heading', { name: 'Van 7' }).waitFor();
    await page.locator('.event-list li', { hasText: 'sos' }).waitFor();
    await screenshots(page, 'device');

    await page.getByRole('link', { name: 'Events', exact: true }).click();
    await page.locator('tbody tr', { hasText: 'sos' }).first().waitFor();
    await screenshots(page, 'events');

    await page.goto(`${h.base}/events/${eventId}`);
    await page.getByRole('heading', { name: 'sos' }).waitFor();
    await screenshots(page, 'event');

    await page.getByRole('link', { name: 'Drivers', exact: true }).click();
    await page.getByRole('link', { name: 'Ilze Ozola' }).click();
    await page.locator('#score-chart canvas').waitFor();
    await screenshots(page, 'driver');
    await page.getByRole('link', { name: '← Drivers' }).click();
    await page.locator('tbody tr', { hasText: 'Van 7' }).waitFor();
    await screenshots(page, 'drivers');

    // The SOS went to the webhook too: its delivery is in the log, and Redeliver sends it again.
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByRole('button', { name: 'Dispatch desk' }).click();
    const row = page.locator('tbody tr', { hasText: 'event.sos' });
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return row.locator('.badge.dl-delivered').count();
      }, { timeout: WAIT })
      .toBeGreaterThan(0);
    await screenshots(page, 'webhooks');
    await row.first().getByRole('button', { name: /Redeliver/ }).click();
    await page.getByText(/queued again/).waitFor();
    // The test, the SOS, and the SOS again (the same event id).
    const sos = () => receiver.received.filter((r) => r.headers['x-service-event'] === 'event.sos');
    await until(() => sos().length >= 3, WAIT, 'the SOS delivered, then redelivered');
    expect(sos()[2]!.headers['x-service-event-id']).toBe(sos()[1]!.headers['x-service-event-id']);

    // Log out: the session ends and the login page is what is left.
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Fleet panel' }).waitFor();
    expect((await page.evaluate(async () => (await fetch('/v1/sessions/current')).status))).toBe(401);
    await screenshots(page, 'login');

    expect(browser.foreign).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, LONG);
});

describe.skipIf(!hasChromium)('customer panel with a tile URL configured', () => {
  /** A 1×1 PNG for every tile. */
  const TILE = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
  const tileRequests: string[] = [];
  let tiles: Server;
  let tileOrigin = '';
  let p: PlatformHarness;
  let b: Browser;

  beforeAll(async () => {
    tiles = createServer((req, res) => {
      tileRequests.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'image/png' }).end(TILE);
    });
    await new Promise<void>((resolve) => tiles.listen(0, '127.0.0.1', resolve));
    tileOrigin = `http://127.0.0.1:${(tiles.address() as AddressInfo).port}`;
    p = await startPlatformHarness({ FLEET_PANEL_TILE_URL: `${tileOrigin}/tiles/{z}/{x}/{y}.png`, FLEET_PANEL_TILE_ATTRIBUTION: '© Test tiles' });
    await createCustomer(p.platform.store, systemClock, { name: 'Tiled', plan: 'pro', first_user: { email: 'map@tiled.example', name: 'Map user', password: PASSWORD } });
    b = await launch(p.base);
  }, LONG);

  afterAll(async () => {
    await b?.close();
    await p?.close();
    tiles?.closeAllConnections();
    await new Promise((resolve) => tiles?.close(resolve));
  }, LONG);

  it('draws the configured tiles over the outline, with their attribution (the CSP lets the tile host in)', async () => {
    const page = await b.context.newPage();
    await page.goto(`${p.base}/login`);
    await page.getByLabel('Email').fill('map@tiled.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Fleet', exact: true }).waitFor();
    await expect.poll(() => page.locator('img.leaflet-tile-loaded').count(), { timeout: WAIT }).toBeGreaterThan(0);
    expect(await page.locator('img.leaflet-tile').first().getAttribute('src')).toMatch(new RegExp(`^${tileOrigin}/tiles/\\d+/\\d+/\\d+\\.png$`));
    expect(tileRequests.length).toBeGreaterThan(0);
    expect(await page.locator('.leaflet-control-attribution').textContent()).toContain('© Test tiles');
    expect(await page.locator('.leaflet-outline-pane path').count()).toBeGreaterThan(100); // the outline is still there, under them
    // The tile host is the only other origin the page reached.
    expect(b.foreign.filter((url) => !url.startsWith(`${tileOrigin}/tiles/`))).toEqual([]);
  }, LONG);
});
