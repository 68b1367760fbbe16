/**
 * Tenant isolation across the whole API: a second customer's key gets 404 for
 * every id of the first, can change none of them, and never sees a row of the
 * first in any list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { recordPosition, reportAlarm } from '../support/store-events.js';

let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness();
});
afterAll(async () => {
  await h.close();
});

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);

describe('tenant isolation', () => {
  it("hides every id and row of one customer from another's key", async () => {
    const a = await h.newCustomer('Alpha Transport');
    const b = await h.newCustomer('Beta Couriers');
    const asA = { authorization: `Bearer ${a.apiKey}` };
    const asB = { authorization: `Bearer ${b.apiKey}` };
    const create = async (url: string, payload: Record<string, unknown>) => {
      const res = await h.app.inject({ method: 'POST', url, headers: asA, payload });
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as Record<string, string>;
    };
    const driver = await create('/v1/drivers', { name: 'Ilze Kalna', external_id: 'A-7' });
    const device = await create('/v1/devices', { imei: imeiFrom('35693803564322'), model: 'FMB920', name: 'Alpha 1', driver_id: driver.id! });
    const geofence = await create('/v1/geofences', { name: 'Alpha yard', center: { lat: 56.95, lng: 24.1 }, radius_m: 500 });
    const key = await create('/v1/api-keys', { name: 'Alpha integration', scopes: ['positions:read'] });
    const client = await create('/v1/oauth/clients', { name: 'Alpha TMS', scopes: ['events:read'] });
    const webhook = await create('/v1/webhooks', { url: 'https://hooks.alpha.example/fleet', events: ['*'], device_ids: [device.id!] });
    const alphaVan = { customerId: a.customerId, deviceId: device.id! };
    await reportAlarm(h, alphaVan, T0, 'event.sos');
    await recordPosition(h, alphaVan, T0);
    let eventId: string | undefined;
    for (let i = 0; i < 100 && !eventId; i++) {
      await h.runner.catchUp();
      eventId = (await h.app.inject({ method: 'GET', url: '/v1/events', headers: asA })).json().data[0]?.id;
      if (!eventId) await new Promise((res) => setTimeout(res, 10));
    }
    expect(eventId).toBeDefined();

    const from = new Date(T0 - 3_600_000).toISOString();
    const forbidden: Array<[string, string, Record<string, unknown>?]> = [
      ['GET', `/v1/devices/${device.id}`],
      ['PATCH', `/v1/devices/${device.id}`, { name: 'mine now' }],
      ['GET', `/v1/positions?device_id=${device.id}&from=${from}`],
      ['GET', `/v1/events/${eventId}`],
      ['GET', `/v1/geofences/${geofence.id}`],
      ['DELETE', `/v1/geofences/${geofence.id}`],
      ['GET', `/v1/drivers/${driver.id}`],
      ['GET', `/v1/drivers/${driver.id}/score`],
      ['DELETE', `/v1/api-keys/${key.id}`],
      ['DELETE', `/v1/oauth/clients/${client.client_id}`],
      ['GET', `/v1/webhooks/${webhook.id}`],
      ['PATCH', `/v1/webhooks/${webhook.id}`, { url: 'https://attacker.example/steal' }],
      ['POST', `/v1/webhooks/${webhook.id}/rotate-secret`, {}],
      ['DELETE', `/v1/webhooks/${webhook.id}`],
    ];
    for (const [method, url, payload] of forbidden) {
      const res = await h.app.inject({ method: method as 'GET', url, headers: asB, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
    // Linking the other tenant's driver is refused like an unknown one.
    const link = await h.app.inject({
      method: 'POST', url: '/v1/devices', headers: asB, payload: { imei: imeiFrom('35693803564330'), model: 'FMB920', driver_id: driver.id },
    });
    expect(link.statusCode).toBe(400);
    expect(link.json().errors[0].pointer).toBe('/body/driver_id');
    const own = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: asB, payload: { imei: imeiFrom('35693803564330'), model: 'FMB920' } });
    expect(own.statusCode).toBe(201);
    const bDevice = own.json().id as string;
    // A webhook of the second customer cannot watch the first one's device.
    const watch = await h.app.inject({ method: 'POST', url: '/v1/webhooks', headers: asB, payload: { url: 'https://hooks.beta.example/x', events: ['*'], device_ids: [device.id] } });
    expect(watch.statusCode).toBe(400);
    expect(watch.json().errors[0].pointer).toBe('/body/device_ids/0');

    const alphaIds = [device.id, driver.id, geofence.id, key.id, client.client_id, eventId, webhook.id];
    for (const url of ['/v1/devices', '/v1/positions/latest', '/v1/events', '/v1/feed', '/v1/geofences', '/v1/drivers', '/v1/api-keys', '/v1/oauth/clients', '/v1/webhooks']) {
      const res = await h.app.inject({ method: 'GET', url, headers: asB });
      expect(res.statusCode, url).toBe(200);
      for (const id of alphaIds) expect(res.body, `${url} shows ${id}`).not.toContain(id);
    }
    // Naming the first customer's ids in filters finds nothing either (or is refused), never its rows.
    const filtered = [
      `/v1/positions/latest?device_id=${device.id}`,
      `/v1/events?device_id=${device.id}`,
      `/v1/events?driver_id=${driver.id}`,
    ];
    for (const url of filtered) {
      const res = await h.app.inject({ method: 'GET', url, headers: asB });
      if (res.statusCode === 200) expect(res.json().data, url).toEqual([]);
      else expect(res.statusCode, url).toBe(400);
      for (const id of alphaIds) expect(res.body, `${url} shows ${id}`).not.toContain(id);
    }
    const relink = await h.app.inject({ method: 'PATCH', url: `/v1/devices/${bDevice}`, headers: asB, payload: { driver_id: driver.id } });
    expect(relink.statusCode).toBe(400);
    expect(relink.json().errors[0].pointer).toBe('/body/driver_id');

    // And everything is still there for its owner.
    expect((await h.app.inject({ method: 'GET', url: `/v1/geofences/${geofence.id}`, headers: asA })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: `/v1/devices/${device.id}`, headers: asA })).json().name).toBe('Alpha 1');
    expect((await h.app.inject({ method: 'GET', url: `/v1/webhooks/${webhook.id}`, headers: asA })).json().url).toBe('https://hooks.alpha.example/fleet');
  });
});
