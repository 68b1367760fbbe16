/**
 * Customer-set text is text on every page of the panel: a customer whose
 * customer, user, device (name, group, model), driver (name, external id),
 * geofence (polygon, circle), webhook (URL, description), API key and OAuth
 * client names are all markup (`<img id=xss-… src=y><b id=xss-…-b>…</b>`),
 * with geofence crossings and an SOS from a device over TCP so event fields
 * carry those names too. Every page, its map tooltips and popups and its
 * confirmation dialogs are opened; no element with any of those ids may exist,
 * and the names show as their literal text. A pen test found a geofence name
 * parsed as HTML in the map's tooltip; panel/src/safe-text.ts is the fix.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { systemClock } from '../../core/clock.js';
import { createCustomer } from '../../core/commands/customers.js';
import { imeiFrom } from '../../core/imei.js';
import { teltonikaEncoder } from '../simulator/encoders/teltonika.js';
import type { EncodeContext, SimPoint } from '../simulator/encoders/types.js';
import { login, sendPoints } from '../support/device-login.js';
import { bearerApi, startPlatformHarness, type Api, type Json, type PlatformHarness } from '../support/platform-harness.js';
import { TcpClient } from '../support/tcp-client.js';
import { until } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { hasChromium, launch, screenshotIfFailed, type Browser } from './browser.js';

const PASSWORD = 'correct horse battery staple';
const EMAIL = 'ops@hostile.example';
const LONG = 240_000;
const WAIT = 90_000;

/** Short keys: a device model may be 64 characters at most. */
const FIELDS = ['customer', 'user', 'device', 'group', 'model', 'driver', 'extid', 'polygon', 'circle', 'webhook', 'hookurl', 'apikey', 'oauth'] as const;
type Field = (typeof FIELDS)[number];
/** Both forms: an image (a request and onerror, were it parsed) and a plain element. */
const hostile = (f: Field) => `<img id=xss-${f} src=y><b id=xss-${f}-b>${f}</b>`;
const IDS = FIELDS.flatMap((f) => [`xss-${f}`, `xss-${f}-b`]);


let h: PlatformHarness;
let browser: Browser;
let page: Page;
let receiver: WebhookReceiver;
let api: Api;
let deviceId = '';
let driverId = '';
let enterEventId = '';
let sosDay = '';
const pageErrors: string[] = [];
const unit: { client: TcpClient | null; ctx: EncodeContext } = { client: null, ctx: { imei: imeiFrom('35693803564999'), terminalId: '', serial: 1 } };

const bearer = (key: string): Api => bearerApi(h.base, key);

/** A request that must succeed (201 for a POST, 200 otherwise); its body. */
async function created(method: string, path: string, body: unknown): Promise<Json> {
  const res = await api(method, path, body);
  expect([path, res.status]).toEqual([path, method === 'POST' ? 201 : 200]);
  return res.json;
}

/** One fix over the unit's TCP session (a Teltonika AVL frame), acknowledged by the gateway. */
async function sendFix(lat: number, lng: number, minutesAgo: number, alarm?: SimPoint['alarm']): Promise<void> {
  const point: SimPoint = { fixTime: Date.now() - minutesAgo * 60_000, lat, lng, speedKmh: 40, headingDeg: 90, altitudeM: 10, satellites: 9, ignition: true, odometerM: 1000, ...(alarm ? { alarm } : {}) };
  const { frame, reply } = await sendPoints(unit.client!, teltonikaEncoder, { ...unit.ctx, serial: ++unit.ctx.serial }, [point]);
  expect(teltonikaEncoder.isAck(reply, frame, 1)).toBe(true);
}

/** The ids of injected elements in the page now (none, when every name stayed text). */
const injected = (p: Page) => p.evaluate<string[]>(`${JSON.stringify(IDS)}.filter((id) => document.getElementById(id) !== null)`);

async function expectNoMarkup(where: string): Promise<void> {
  expect([where, await injected(page)]).toEqual([where, []]);
}

/** Opens a confirmation dialog, checks it shows `text` literally and nothing injected, then cancels it. */
async function confirmShows(open: () => Promise<void>, text: string, where: string): Promise<void> {
  await open();
  const dialog = page.getByRole('dialog');
  await expect.poll(() => dialog.textContent(), { timeout: WAIT }).toContain(text);
  await expectNoMarkup(`${where} dialog`);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await page.locator('dialog').waitFor({ state: 'detached' });
}

/** A Leaflet map's view after its last move: no zoom or pan animation under way. */
const settled = (p: Page) => p.locator('.leaflet-zoom-anim, .leaflet-pan-anim').first().waitFor({ state: 'detached' });

describe.skipIf(!hasChromium)('customer-set text in the panel stays text', () => {
  beforeAll(async () => {
    h = await startPlatformHarness();
    const customer = await createCustomer(h.platform.store, systemClock, { name: hostile('customer'), plan: 'pro', first_user: { email: EMAIL, name: hostile('user'), password: PASSWORD } });
    api = bearer(customer.api_key);
    receiver = await startWebhookReceiver();

    deviceId = (await created('POST', '/v1/devices', { imei: unit.ctx.imei, model: hostile('model'), name: hostile('device'), group_id: hostile('group') })).id;
    driverId = (await created('POST', '/v1/drivers', { name: hostile('driver'), external_id: hostile('extid') })).id;
    await created('PATCH', `/v1/devices/${deviceId}`, { driver_id: driverId });
    // Far enough apart to hover each on the map that fits both.
    await created('POST', '/v1/geofences', { name: hostile('circle'), center: { lat: 56.95, lng: 24.1 }, radius_m: 2000 });
    const ring = [[24.85, 57.4], [24.95, 57.4], [24.95, 57.5], [24.85, 57.5], [24.85, 57.4]];
    await created('POST', '/v1/geofences', { name: hostile('polygon'), geometry: { type: 'Polygon', coordinates: [ring] } });
    await created('POST', '/v1/webhooks', { url: `${receiver.url}/${hostile('hookurl')}`, events: ['*'], description: hostile('webhook') });
    await created('POST', '/v1/api-keys', { name: hostile('apikey'), scopes: ['devices:read'] });
    await created('POST', '/v1/oauth/clients', { name: hostile('oauth'), scopes: ['devices:read'] });

    // Into the circle, on into the polygon (exit, enter), then an SOS outside both: events naming the fences.
    unit.client = await TcpClient.open(h.platform.ports.teltonika!);
    await login(unit.client, teltonikaEncoder, unit.ctx);
    await sendFix(56.5, 23.5, 40);
    await sendFix(56.95, 24.1, 30);
    await sendFix(57.45, 24.9, 20);
    await sendFix(57.2, 25.6, 10, 'event.sos');
    await until(async () => (await api('GET', '/v1/events')).json.data.length >= 4, 'the crossings and the SOS in the read model', WAIT);
    const events = (await api('GET', '/v1/events')).json.data as { id: string; kind: string; occurred_at: string; geofence_name?: string }[];
    enterEventId = events.find((e) => e.kind === 'geofence.enter' && e.geofence_name === hostile('polygon'))!.id;
    sosDay = events.find((e) => e.kind === 'event.sos')!.occurred_at.slice(0, 10);

    browser = await launch(h.base);
    page = await browser.context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
  }, LONG);

  afterEach((ctx) => screenshotIfFailed(ctx, page, 'failed-hostile'));

  afterAll(async () => {
    unit.client?.close();
    await browser?.close();
    await receiver?.close();
    await h?.close();
  }, LONG);

  it('logs in and shows the customer name as text in the top bar', async () => {
    await page.goto(`${h.base}/login`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Fleet', exact: true }).waitFor();
    expect(await page.locator('.who .user').textContent()).toBe(hostile('customer'));
    await expectNoMarkup('shell');
  }, LONG);

  it('fleet: the device list, the group filter and the marker popup', async () => {
    await page.goto(`${h.base}/fleet`);
    const item = page.locator(`.device-list li[data-device-id="${deviceId}"]`);
    await page.locator(`.device-marker[data-device-id="${deviceId}"]`).waitFor();
    expect(await item.locator('a.name').textContent()).toBe(hostile('device'));
    expect(await page.locator('#group-filter option').nth(1).textContent()).toBe(hostile('group'));
    await expectNoMarkup('fleet');
    await item.getByRole('button', { name: /Show on map/ }).click();
    const popup = page.locator('.leaflet-popup-content');
    await popup.waitFor();
    expect(await popup.locator('strong').textContent()).toBe(hostile('device'));
    await expectNoMarkup('fleet popup');
  }, LONG);

  it("device: its facts, its driver, and its events' tooltips on the track", async () => {
    await page.goto(`${h.base}/devices/${deviceId}?day=${sosDay}`);
    await page.getByRole('heading', { name: hostile('device') }).waitFor();
    await page.locator('.event-list li').first().waitFor();
    expect(await page.locator('.facts').textContent()).toContain(hostile('model'));
    expect(await page.getByRole('link', { name: hostile('driver') }).count()).toBe(1);
    await settled(page);
    // Each event's marker opens its tooltip on mouseover (dispatched: markers may lie under the device's).
    const paths = page.locator('#device-map path.leaflet-interactive');
    for (let i = 0; i < (await paths.count()); i++) await paths.nth(i).dispatchEvent('mouseover');
    await page.locator('.leaflet-tooltip').first().waitFor();
    await expectNoMarkup('device');
  }, LONG);

  it('events and an event: the device column, the device filter, the crossing naming the geofence, its tooltip', async () => {
    await page.goto(`${h.base}/events`);
    await page.locator('tbody tr').nth(3).waitFor();
    expect(await page.locator('tbody tr td:nth-child(4)').first().textContent()).toBe(hostile('device'));
    expect(await page.locator('#f-device option').nth(1).textContent()).toBe(hostile('device'));
    await expectNoMarkup('events');

    await page.goto(`${h.base}/events/${enterEventId}`);
    await page.getByRole('link', { name: hostile('device') }).waitFor();
    expect(await page.locator('.facts').first().textContent()).toContain(hostile('polygon'));
    await page.locator('.leaflet-tooltip').waitFor();
    await expectNoMarkup('event');
  }, LONG);

  it('geofences: the list, both map tooltips (hovered) and the delete confirmation', async () => {
    await page.goto(`${h.base}/geofences`);
    await page.locator('.fence-list li').nth(1).waitFor();
    expect(await page.locator('.fence-list strong').allTextContents()).toEqual(expect.arrayContaining([hostile('circle'), hostile('polygon')]));
    const shapes = page.locator('#geofence-map path.leaflet-interactive');
    await expect.poll(() => shapes.count(), { timeout: WAIT }).toBe(2);
    await settled(page);
    const tooltip = page.locator('.leaflet-tooltip');
    const shown: string[] = [];
    for (let i = 0; i < 2; i++) {
      await shapes.nth(i).hover();
      await tooltip.waitFor();
      expect(await tooltip.isVisible()).toBe(true);
      shown.push((await tooltip.textContent()) ?? '');
      await expectNoMarkup(`geofence tooltip ${i}`);
      await page.mouse.move(1, 1); // off the map: the tooltip closes
      await tooltip.waitFor({ state: 'detached' });
    }
    expect(shown.sort()).toEqual([hostile('circle'), hostile('polygon')]);
    const item = page.locator('.fence-list li', { hasText: 'polygon' });
    await confirmShows(() => item.getByRole('button', { name: /Delete/ }).click(), hostile('polygon'), 'geofences');
  }, LONG);

  it("drivers and a driver: the name, the external id and the vehicle's name", async () => {
    await page.goto(`${h.base}/drivers`);
    const row = page.locator('tbody tr').first();
    await row.waitFor();
    expect(await row.locator('td').allTextContents()).toEqual(expect.arrayContaining([hostile('driver'), hostile('extid'), hostile('device')]));
    await expectNoMarkup('drivers');
    await row.getByRole('link', { name: hostile('driver') }).click();
    await page.getByRole('heading', { name: hostile('driver') }).waitFor();
    await page.getByRole('link', { name: hostile('device') }).waitFor();
    await expectNoMarkup('driver');
  }, LONG);

  it('API access: the key and the client in their tables and their confirmations', async () => {
    await page.goto(`${h.base}/settings/api`);
    const keyRow = page.locator('tr', { hasText: 'apikey' });
    const clientRow = page.locator('tr', { hasText: 'oauth' });
    await keyRow.waitFor();
    await clientRow.waitFor();
    expect(await keyRow.locator('td').first().textContent()).toBe(hostile('apikey'));
    expect(await clientRow.locator('td').first().textContent()).toBe(hostile('oauth'));
    await expectNoMarkup('settings/api');
    await confirmShows(() => keyRow.getByRole('button', { name: /Revoke/ }).click(), hostile('apikey'), 'revoke key');
    await confirmShows(() => clientRow.getByRole('button', { name: /Delete/ }).click(), hostile('oauth'), 'delete client');
  }, LONG);

  it('webhooks: the endpoint list, its detail, the delete confirmation', async () => {
    const url = ((await api('GET', '/v1/webhooks')).json.data as { url: string }[])[0]!.url;
    expect(url).toContain(hostile('hookurl')); // stored as sent: the markup reaches the page
    await page.goto(`${h.base}/settings/webhooks`);
    await page.getByRole('button', { name: hostile('webhook') }).click();
    await page.getByRole('heading', { name: hostile('webhook') }).waitFor();
    expect(await page.locator('.facts code').first().textContent()).toBe(url);
    await expectNoMarkup('settings/webhooks');
    await confirmShows(() => page.getByRole('button', { name: 'Delete', exact: true }).click(), url, 'delete webhook');
    expect(pageErrors).toEqual([]);
  }, LONG);
});
