/**
 * GET /v1/webhooks/{id}/deliveries filtered by state and kind, on a running
 * platform with a real local receiver: deliveries it took (200) and one it
 * refused for good (410, so failed at its first attempt), listed by filter,
 * paged, with the cursor tied to the filters it was issued for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUuid } from '../../core/ids.js';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { startPlatformHarness, type Json, type PlatformHarness } from '../support/platform-harness.js';
import { positionRecorded } from '../support/store-events.js';
import { until } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let p: PlatformHarness;

beforeAll(async () => {
  p = await startPlatformHarness();
}, 60_000);

afterAll(async () => {
  await p.close();
});

describe('GET /v1/webhooks/{id}/deliveries?state=&event=', () => {
  let rx: WebhookReceiver;
  let list: string;
  afterAll(async () => rx?.close());

  const get = async (query: string) => p.api('GET', `${list}${query}`);
  const kindsAndStates = (data: Json[]) => data.map((d: Json) => `${d.event}:${d.state}`);

  beforeAll(async () => {
    rx = await startWebhookReceiver();
    const deviceId = await p.registerDevice({ imei: imeiFrom('35209807900001') });
    const created = await p.api('POST', '/v1/webhooks', { url: rx.url, events: ['*'] });
    expect(created.status).toBe(201);
    list = `/v1/webhooks/${created.json.id}/deliveries`;
    const device = { customerId: p.customerId, deviceId };
    const at = Date.now() - 60_000;
    await p.platform.store.appendToStream(streams.device(deviceId), [
      { id: randomUuid(), type: 'DeviceConnected', data: { device_id: deviceId, customer_id: p.customerId, connection_id: 'c1', protocol: 'teltonika', remote_address: '10.0.0.1:1', at } },
    ]);
    await p.platform.store.appendToStream(streams.telemetry(deviceId), [1, 2, 3].map((i) => positionRecorded(device, at + i * 1000)));
    await p.platform.store.appendToStream(streams.device(deviceId), [
      { id: randomUuid(), type: 'DeviceDisconnected', data: { device_id: deviceId, customer_id: p.customerId, connection_id: 'c1', reason: 'closed', last_seen_at: at + 3000, at: at + 4000 } },
    ]);
    await until(async () => (await get('?state=delivered')).json.data?.length === 5, 'five deliveries delivered');

    // The receiver is gone for good: the next delivery fails at its first attempt (and disables the endpoint).
    rx.respond(410);
    await p.platform.store.appendToStream(streams.telemetry(deviceId), [positionRecorded(device, at + 5000)]);
    await until(async () => (await get('')).json.data?.some((d: Json) => d.state === 'failed'), 'a failed delivery');
  }, 60_000);

  it('lists only the failed deliveries with state=failed, and combines states', async () => {
    const failed = await get('?state=failed');
    expect(failed.status).toBe(200);
    expect(failed.json.data).toHaveLength(1);
    expect(failed.json.data[0]).toMatchObject({ event: 'position.updated', state: 'failed', last_status: 410, attempts: 1 });
    expect(failed.json.pagination).toEqual({ next_cursor: null, has_more: false });

    const all = (await get('')).json.data as Json[];
    expect(all).toHaveLength(6);
    expect(kindsAndStates((await get('?state=delivered,failed')).json.data)).toEqual(kindsAndStates(all));
    expect((await get('?state=delivered')).json.data.map((d: Json) => d.id)).toEqual(all.filter((d) => d.state === 'delivered').map((d) => d.id));
    expect((await get('?state=pending,cancelled')).json.data).toEqual([]);
  });

  it('lists only the kinds asked for with event=device.* or exact kinds, with states too', async () => {
    expect(kindsAndStates((await get('?event=device.*')).json.data)).toEqual(['device.offline:delivered', 'device.online:delivered']);
    expect(kindsAndStates((await get('?event=device.online,position.updated&state=failed')).json.data)).toEqual(['position.updated:failed']);
    expect((await get('?event=position.updated&state=delivered')).json.data).toHaveLength(3);
    expect((await get('?event=alarm.*')).json.data).toEqual([]);
  });

  it('pages a filtered list newest first; a cursor used with other filters is 400 cursor_mismatch', async () => {
    const first = await get('?state=delivered&limit=2');
    expect(first.json.pagination.has_more).toBe(true);
    const cursor = first.json.pagination.next_cursor as string;
    const second = await get(`?state=delivered&limit=2&cursor=${cursor}`);
    const third = await get(`?state=delivered&limit=2&cursor=${second.json.pagination.next_cursor}`);
    expect(third.json.pagination).toEqual({ next_cursor: null, has_more: false });
    const walked = [...first.json.data, ...second.json.data, ...third.json.data].map((d: Json) => d.id);
    expect(walked).toEqual((await get('?state=delivered')).json.data.map((d: Json) => d.id));
    // The same filter written otherwise is the same filter.
    expect((await get(`?state=delivered,delivered&limit=2&cursor=${cursor}`)).status).toBe(200);

    for (const other of ['?state=failed', '', '?event=device.*&state=delivered']) {
      const res = await get(`${other}${other ? '&' : '?'}limit=2&cursor=${cursor}`);
      expect(res.status, other).toBe(400);
      expect(res.json).toMatchObject({ code: 'cursor_mismatch', errors: [{ pointer: '/query/cursor' }] });
    }
  });

  it('refuses an unknown state or kind with a 400 naming the parameter', async () => {
    const state = await get('?state=failed,lost');
    expect(state.status).toBe(400);
    expect(state.json).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/query/state', message: 'must be one of pending, delivered, failed, cancelled' }] });
    expect(state.json.detail).toContain('"lost"');
    for (const query of ['?event=device.rebooted', '?event=devices.*', '?event=,']) {
      const res = await get(query);
      expect(res.status, query).toBe(400);
      expect(res.json, query).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/query/event' }] });
    }
    expect((await get('?state=,')).json.errors[0].pointer).toBe('/query/state');
  });
});
