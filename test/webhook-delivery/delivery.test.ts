/**
 * The delivery service on a real store and a real local receiver, with a
 * hand-moved clock for schedules and plan limits: events in the log become
 * signed requests, retried on schedule, limited per customer, in order per
 * device, and disabled endpoints stop.
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { setCustomerWebhookLimit } from '../../core/commands/customers.js';
import type { EventToAppend } from '../../core/event-store/port.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import type { Plan } from '../../core/events.js';
import { newId, randomUuid } from '../../core/ids.js';
import { silentLogger } from '../../core/logger.js';
import { SecretBox } from '../../core/secret-box.js';
import { streams } from '../../core/streams.js';
import { webhookFeed } from '../../projections/webhooks/feed.js';
import { WebhookDelivery } from '../../webhook-delivery/index.js';
import { RETRY_SCHEDULE_MS } from '../../webhook-delivery/retry-schedule.js';
import { generateWebhookSecret } from '../../core/webhook-endpoint.js';
import { until } from '../support/device-login.js';
import { positionRecorded, type DeviceRef } from '../support/store-events.js';
import { signatureValid, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const cleanups: Array<() => Promise<void> | void> = [];
const feedOf = (s: { store: SqliteEventStore; clock: ManualClock }) => webhookFeed({ store: s.store, clock: s.clock, log: silentLogger });
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-webhooks-'));
  const clock = new ManualClock(Date.now());
  const store = new SqliteEventStore(join(dir, 'events.sqlite'), { clock, synchronous: 'OFF' });
  const box = SecretBox.fromKey(randomBytes(32));
  const delivery = new WebhookDelivery({
    store, clock, log: silentLogger, dbPath: join(dir, 'webhooks.sqlite'), box, allowPrivate: true, enterprisePerS: 1000,
    feed: webhookFeed({ store, clock, log: silentLogger }),
    // No jitter: the schedule itself is checked.
    random: () => 0.5,
  });
  await delivery.start();
  // A closing database's thread may still drop its -wal or -shm file while the directory goes: retried.
  cleanups.push(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }));
  cleanups.push(() => store.close());
  cleanups.push(() => delivery.stop());
  const append = (stream: string, events: EventToAppend[]) => store.appendToStream(stream, events);

  async function customer(plan: Plan = 'pro'): Promise<string> {
    const id = newId('cus', clock.now());
    await append(streams.tenant(id), [{ id: randomUuid(), type: 'CustomerCreated', data: { customer_id: id, name: id, plan, created_at: clock.now() } }]);
    return id;
  }
  async function device(customerId: string, name = 'Van 1'): Promise<DeviceRef> {
    const deviceId = newId('dev', clock.now());
    await append(streams.device(deviceId), [
      {
        id: randomUuid(),
        type: 'DeviceRegistered',
        data: { device_id: deviceId, customer_id: customerId, imei: '356307042441013', model: 'FMB920', name, group_id: null, driver_id: null, terminal_id: null, created_at: clock.now() },
      },
    ]);
    return { customerId, deviceId };
  }
  /** An endpoint's creation, not appended yet. */
  function endpointCreated(customerId: string, receiver: WebhookReceiver, events: string[] = ['*'], url = receiver.url) {
    const webhookId = newId('whk', clock.now());
    const secret = generateWebhookSecret();
    const event: EventToAppend = {
      id: randomUuid(),
      type: 'WebhookEndpointCreated',
      data: { webhook_id: webhookId, customer_id: customerId, url, events, device_ids: null, description: null, enabled: true, secret_ciphertext: box.seal(secret), created_at: clock.now() },
    };
    return { webhookId, secret, stream: streams.webhook(webhookId), event };
  }
  async function endpoint(customerId: string, receiver: WebhookReceiver, events: string[] = ['*'], url = receiver.url) {
    const { webhookId, secret, stream, event } = endpointCreated(customerId, receiver, events, url);
    const { position } = await append(stream, [event]);
    await delivery.waitFor(position);
    return { webhookId, secret };
  }
  async function receiver() {
    const r = await startWebhookReceiver();
    cleanups.push(() => r.close());
    return r;
  }
  const fixes = (d: DeviceRef, n: number, t0 = clock.now() - 60_000) =>
    append(streams.telemetry(d.deviceId), Array.from({ length: n }, (_, i) => positionRecorded(d, t0 + i * 1000, { speed_kmh: i })));
  /** A receiver, and a Pro customer with one device and one endpoint for `events` on that receiver. */
  async function oneDeviceEndpoint(events = ['position.updated']) {
    const rx = await receiver();
    const cus = await customer();
    const dev = await device(cus);
    const { webhookId } = await endpoint(cus, rx, events);
    return { rx, cus, dev, webhookId };
  }
  /** oneDeviceEndpoint, whose device's first position (fixed at `t0`) the receiver answered with 500: it waits for its retry. */
  async function firstDeliveryFailed(t0 = clock.now() - 60_000) {
    const { rx, cus, dev, webhookId } = await oneDeviceEndpoint();
    rx.respond(500);
    await fixes(dev, 1, t0);
    await rx.waitFor(1);
    await until(() => delivery.reads.deliveries(cus, webhookId, null, 1)[0]?.attempts === 1);
    return { rx, cus, dev, webhookId, failed: delivery.reads.deliveries(cus, webhookId, null, 1)[0]! };
  }
  /**
   * A customer with a device and a device.* endpoint (the projector reads no fixes), and the creation of an endpoint
   * for fixes on `rx`, not appended yet; `at(speeds)` appends a fix per speed, `speed` seconds after `t0`.
   */
  async function fixesEndpointToCome() {
    const cus = await customer();
    const dev = await device(cus);
    await endpoint(cus, await receiver(), ['device.*']);
    const rx = await receiver();
    const t0 = clock.now() - 60_000;
    const at = (speeds: number[]) => append(streams.telemetry(dev.deviceId), speeds.map((i) => positionRecorded(dev, t0 + i * 1000, { speed_kmh: i })));
    return { cus, dev, rx, created: endpointCreated(cus, rx, ['position.updated']), at };
  }
  return { dir, store, clock, box, delivery, append, customer, device, endpoint, receiver, fixes, oneDeviceEndpoint, firstDeliveryFailed, fixesEndpointToCome };
}

describe('webhook delivery', () => {
  it('sends position, online and offline payloads signed with the secret, with the delivery headers', async () => {
    const s = await setup();
    const rx = await s.receiver();
    const cus = await s.customer();
    const dev = await s.device(cus, 'Truck 7');
    const { webhookId, secret } = await s.endpoint(cus, rx);
    const at = s.clock.now();
    await s.append(streams.device(dev.deviceId), [
      { id: randomUuid(), type: 'DeviceConnected', data: { device_id: dev.deviceId, customer_id: cus, connection_id: 'c1', protocol: 'teltonika', remote_address: '10.0.0.1:1', at } },
    ]);
    await s.fixes(dev, 1, at);
    await s.append(streams.device(dev.deviceId), [
      { id: randomUuid(), type: 'DeviceDisconnected', data: { device_id: dev.deviceId, customer_id: cus, connection_id: 'c1', reason: 'closed', last_seen_at: at + 500, at: at + 1000 } },
    ]);
    const got = await rx.waitFor(3);
    expect(got.map((r) => r.json.event)).toEqual(['device.online', 'position.updated', 'device.offline']);
    for (const r of got) {
      expect(signatureValid(r, secret)).toBe(true);
      expect(signatureValid(r, 'whsec_wrong')).toBe(false);
      expect(Math.abs(Number(r.headers['x-service-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
      expect(r.headers['x-service-event']).toBe(r.json.event);
      expect(r.headers['x-service-event-id']).toBe(r.json.event_id);
      expect(r.headers['x-service-delivery-id']).toMatch(/^dlv_/);
      expect(r.headers['x-service-attempt']).toBe('1');
      expect(r.json).toMatchObject({ device_id: dev.deviceId, device_name: 'Truck 7', driver_id: null });
    }
    expect(got[0]!.json).toMatchObject({ protocol: 'teltonika', severity: 'info', position: null });
    expect(got[1]!.json).toMatchObject({ severity: 'info', position: { lat: 56.95, lng: 24.1, speed_kmh: 0, timestamp: new Date(at).toISOString() } });
    expect(got[2]!.json).toMatchObject({ severity: 'low', reason: 'closed', last_seen_at: new Date(at + 500).toISOString() });
    await until(() => s.delivery.reads.deliveries(cus, webhookId, null, 10).every((d) => d.state === 'delivered'));
    const [last] = s.delivery.reads.deliveries(cus, webhookId, null, 1);
    expect(last).toMatchObject({ kind: 'device.offline', attempts: 1, last_status: 200 });
  });

  it('retries a 500 on schedule with the same event_id and body, and stops at the first 2xx', async () => {
    const s = await setup();
    const { rx, cus, webhookId, failed } = await s.firstDeliveryFailed();
    expect(failed).toMatchObject({ state: 'pending', last_status: 500, next_attempt_at: failed.last_attempt_at! + RETRY_SCHEDULE_MS[0]! });
    rx.respond(200);
    s.clock.advance(RETRY_SCHEDULE_MS[0]! - 1);
    s.clock.advance(1);
    const [first, second] = await rx.waitFor(2);
    expect(second!.raw).toBe(first!.raw);
    expect(second!.headers['x-service-event-id']).toBe(first!.headers['x-service-event-id']);
    expect(second!.headers['x-service-attempt']).toBe('2');
    await until(() => s.delivery.reads.deliveries(cus, webhookId, null, 1)[0]?.state === 'delivered');
    expect(s.delivery.reads.delivery(cus, webhookId, failed.delivery_id)!.attempt_log.map((a) => a.status)).toEqual([500, 200]);
  });

  it("holds a device's deliveries queued after one of its deliveries failed behind that delivery's retry, then sends them in order", async () => {
    const s = await setup();
    const t0 = s.clock.now() - 60_000;
    const { rx, dev } = await s.firstDeliveryFailed(t0);
    rx.respond(200);
    // Queued (and handed to the dispatcher) while the first one waits for its retry.
    const { position } = await s.fixes(dev, 3, t0 + 1000);
    await s.delivery.waitFor(position);
    await new Promise((r) => setTimeout(r, 200));
    expect(rx.received).toHaveLength(1);
    s.clock.advance(RETRY_SCHEDULE_MS[0]!);
    const got = await rx.waitFor(5);
    expect(got.slice(1).map((r) => r.json.position.speed_kmh)).toEqual([0, 0, 1, 2]);
    expect(got[1]!.headers['x-service-attempt']).toBe('2');
  });

  it("sends a redelivery of a device's delivered event although the device's newer deliveries are queued", async () => {
    const s = await setup();
    const { rx, cus, dev, webhookId } = await s.oneDeviceEndpoint();
    await s.fixes(dev, 1);
    const [first] = await rx.waitFor(1);
    await until(() => s.delivery.reads.deliveries(cus, webhookId, null, 1)[0]?.state === 'delivered');
    const delivered = s.delivery.reads.deliveries(cus, webhookId, null, 1)[0]!;
    // A free customer's bucket would hold later ones back; this one is Pro, so the lane keeps moving while the redelivery comes in.
    await s.fixes(dev, 5, s.clock.now());
    await s.append(streams.webhook(webhookId), [
      { id: randomUuid(), type: 'WebhookRedeliveryRequested', data: { customer_id: cus, webhook_id: webhookId, delivery_id: delivered.delivery_id, requested_at: s.clock.now() } },
    ]);
    for (let i = 0; i < 50 && rx.received.length < 7; i++) {
      s.clock.advance(100);
      await new Promise((r) => setTimeout(r, 10));
    }
    const got = await rx.waitFor(7);
    const again = got.slice(1).filter((r) => r.headers['x-service-event-id'] === first!.headers['x-service-event-id']);
    expect(again).toHaveLength(1);
    expect(again[0]!.raw).toBe(first!.raw);
    expect(again[0]!.headers['x-service-attempt']).toBe('2');
    // Both attempts stay in its log: the first was only on the delivery's row until the redelivery.
    await until(() => s.delivery.reads.delivery(cus, webhookId, delivered.delivery_id)!.attempts === 2 && s.delivery.reads.delivery(cus, webhookId, delivered.delivery_id)!.state === 'delivered');
    expect(s.delivery.reads.delivery(cus, webhookId, delivered.delivery_id)!.attempt_log.map((a) => [a.attempt, a.status])).toEqual([[1, 200], [2, 200]]);
  });

  it('disables the endpoint when the receiver answers 410', async () => {
    const s = await setup();
    const { rx, dev, webhookId } = await s.oneDeviceEndpoint(['*']);
    rx.respond(410);
    await s.fixes(dev, 1);
    await until(async () => (await s.store.readStream(streams.webhook(webhookId))).some((e) => e.type === 'WebhookEndpointDisabled'));
    const disabled = (await s.store.readStream(streams.webhook(webhookId))).find((e) => e.type === 'WebhookEndpointDisabled');
    expect(disabled?.data).toMatchObject({ reason: 'gone' });
  });

  it('keeps a disable it decided against an earlier update the projector applies after it', async () => {
    const s = await setup();
    const { webhookId, cus } = await s.oneDeviceEndpoint();
    const dbPath = join(s.dir, 'webhooks-late-update.sqlite');
    const open = () => new WebhookDelivery({ store: s.store, clock: s.clock, log: silentLogger, dbPath, box: s.box, allowPrivate: true, enterprisePerS: 1000, feed: feedOf(s) });
    const first = open();
    await first.start();
    await first.stop();
    // A 410 was committed here, and the customer's update enabling the endpoint sits in the log before its disable.
    const pending = { id: randomUuid(), reason: 'gone', detail: 'The receiver answered 410 Gone.', at: s.clock.now() };
    const db = new Database(dbPath);
    db.prepare('UPDATE wh_endpoints SET enabled = 0, disable_pending = ? WHERE webhook_id = ?').run(JSON.stringify(pending), webhookId);
    db.close();
    await s.append(streams.webhook(webhookId), [
      { id: randomUuid(), type: 'WebhookEndpointUpdated', data: { webhook_id: webhookId, customer_id: cus, enabled: true, updated_at: s.clock.now() } },
    ]);
    const delivery = open();
    await delivery.start();
    const row = () => {
      const r = new Database(dbPath, { readonly: true });
      try {
        return r.prepare('SELECT enabled, disable_pending FROM wh_endpoints WHERE webhook_id = ?').get(webhookId) as { enabled: number; disable_pending: string | null };
      } finally {
        r.close();
      }
    };
    await until(async () => (await s.store.readStream(streams.webhook(webhookId))).some((e) => e.type === 'WebhookEndpointDisabled' && e.id === pending.id));
    await until(() => row().disable_pending === null);
    expect(row().enabled).toBe(0);
    await delivery.stop();
  });

  it('appends at its next start a disabling that a crash kept out of the log, once however often it is appended', async () => {
    const s = await setup();
    const { webhookId } = await s.oneDeviceEndpoint();
    const dbPath = join(s.dir, 'webhooks-crashed.sqlite');
    const open = () => new WebhookDelivery({ store: s.store, clock: s.clock, log: silentLogger, dbPath, box: s.box, allowPrivate: true, enterprisePerS: 1000, feed: feedOf(s) });
    const first = open();
    await first.start();
    await first.stop();
    const disabled = async () => (await s.store.readStream(streams.webhook(webhookId))).filter((e) => e.type === 'WebhookEndpointDisabled');
    const pending = { id: randomUuid(), reason: 'gone', detail: 'The receiver answered 410 Gone.', at: s.clock.now() - 1000 };
    // Twice what a 410's commit leaves when the process dies before its append (the second time, after it): disabled here only.
    for (let start = 0; start < 2; start++) {
      const db = new Database(dbPath);
      db.prepare('UPDATE wh_endpoints SET enabled = 0, disable_pending = ? WHERE webhook_id = ?').run(JSON.stringify(pending), webhookId);
      db.close();
      const delivery = open();
      await delivery.start();
      await until(async () => (await disabled()).length > 0);
      await delivery.stop();
    }
    const events = await disabled();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ id: pending.id, data: { webhook_id: webhookId, reason: 'gone', disabled_at: pending.at } });
  });

  it('disables an endpoint whose every attempt failed for three days, and says why', async () => {
    const s = await setup();
    const { rx, cus, dev, webhookId } = await s.oneDeviceEndpoint();
    rx.respond(503);
    await s.fixes(dev, 1);
    const disabled = async () => (await s.store.readStream(streams.webhook(webhookId))).find((e) => e.type === 'WebhookEndpointDisabled');
    // Walk the retry schedule: each retry fails, until three days of failures disable the endpoint.
    for (let attempt = 1; attempt <= RETRY_SCHEDULE_MS.length && !(await disabled()); attempt++) {
      await until(() => s.delivery.reads.deliveries(cus, webhookId, null, 1)[0]?.attempts === attempt, 10_000, `attempt ${attempt}`);
      s.clock.advance(RETRY_SCHEDULE_MS[attempt - 1]!);
    }
    await until(async () => (await disabled()) !== undefined, 10_000, 'disabled');
    const event = (await disabled())!;
    expect(event.data).toMatchObject({ reason: 'failing' });
    const failingFor = (event.data as { disabled_at: number }).disabled_at - s.delivery.reads.delivery(cus, webhookId, s.delivery.reads.deliveries(cus, webhookId, null, 1)[0]!.delivery_id)!.attempt_log[0]!.at;
    expect(failingFor).toBeGreaterThanOrEqual(3 * 24 * 3_600_000);
  });

  it("delivers everything, in order per device, once a receiver that was down is back, however long one device's backlog", async () => {
    const s = await setup();
    const rx = await s.receiver();
    const cus = await s.customer();
    const a = await s.device(cus, 'A');
    const b = await s.device(cus, 'B');
    const { webhookId } = await s.endpoint(cus, rx, ['position.updated']);
    await rx.close();
    // A's backlog is longer than any scan of due rows: B's retry must still be found behind it.
    const counts = new Map([[a.deviceId, 150], [b.deviceId, 5]]);
    await s.fixes(a, 150);
    await s.fixes(b, 5);
    // Each device's first delivery fails and holds its lane.
    await until(() => s.delivery.reads.deliveries(cus, webhookId, null, 200).filter((d) => d.attempts > 0).length >= 2);
    await rx.reopen();
    s.clock.advance(RETRY_SCHEDULE_MS[0]! * 1.2);
    // Pro: 100 a second, at most 10 at once: move the clock a tenth of a second at a time.
    for (let i = 0; i < 400 && rx.received.length < 155; i++) {
      s.clock.advance(100);
      await new Promise((r) => setTimeout(r, 10));
    }
    const got = await rx.waitFor(155);
    for (const [deviceId, n] of counts) {
      const speeds = got.filter((r) => r.json.device_id === deviceId).map((r) => r.json.position.speed_kmh);
      expect(speeds).toEqual(Array.from({ length: n }, (_, i) => i));
    }
  });

  it('sends the fixes after an endpoint that takes them was created, read with it while no endpoint took fixes', async () => {
    const s = await setup();
    const { dev, rx, created, at } = await s.fixesEndpointToCome();
    // Issued together, so the projector may read them at once: the fixes after the creation come with it.
    await Promise.all([at([0, 1, 2]), s.append(created.stream, [created.event]), at([3, 4])]);
    await s.fixes(dev, 1, s.clock.now());
    const got = await rx.waitFor(3);
    // The last came after the others in the device's order: nothing before the creation is queued ahead of them.
    expect(got.map((r) => r.json.position.speed_kmh)).toEqual([3, 4, 0]);
  });

  it('sends the fixes after an endpoint that takes them when its delivery starts on a log that holds both', async () => {
    const s = await setup();
    const { cus, rx, created, at } = await s.fixesEndpointToCome();
    await at([0, 1, 2]);
    await s.append(created.stream, [created.event]);
    await at([3, 4]);
    // A delivery of its own over the same log, from an empty database: its start reads the log without fixes up to the creation.
    const fresh = new WebhookDelivery({
      store: s.store, clock: s.clock, log: silentLogger, dbPath: join(s.dir, 'webhooks-fresh.sqlite'), box: s.box, allowPrivate: true, enterprisePerS: 1000, random: () => 0.5,
      feed: feedOf(s),
    });
    await fresh.start();
    cleanups.push(() => fresh.stop());
    // Both deliveries send to the receiver: each sends the two fixes after the creation, and nothing else.
    const got = await rx.waitFor(4);
    expect(got.map((r) => r.json.position.speed_kmh).sort()).toEqual([3, 3, 4, 4]);
    expect(fresh.reads.deliveries(cus, created.webhookId, null, 10).map((d) => d.kind)).toEqual(['position.updated', 'position.updated']);
  });

  it("holds an Enterprise customer to its agreed rate once it is set", async () => {
    const s = await setup();
    const rx = await s.receiver();
    const big = await s.customer('enterprise');
    const dev = await s.device(big);
    await s.endpoint(big, rx, ['position.updated']);
    await s.delivery.waitFor(await setCustomerWebhookLimit(s.store, s.clock, big, 4));
    await s.fixes(dev, 12);
    await rx.waitFor(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received).toHaveLength(1);
    for (let step = 1; step <= 4; step++) {
      s.clock.advance(250);
      await rx.waitFor(1 + step);
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(rx.received).toHaveLength(5); // 4 a second, after the first
  });

  it('holds a Free customer to 10 deliveries a second without dropping any, and a dead receiver of another customer delays nothing', async () => {
    const s = await setup();
    const rx = await s.receiver();
    const dead = await s.receiver();
    dead.respond(() => null); // accepts and never answers
    const free = await s.customer('free');
    const other = await s.customer('free');
    const devices = [await s.device(free, 'F1'), await s.device(free, 'F2')];
    const otherDevice = await s.device(other, 'O1');
    await s.endpoint(free, rx, ['position.updated']);
    await s.endpoint(other, dead, ['position.updated']);
    await s.fixes(otherDevice, 50);
    for (const d of devices) await s.fixes(d, 25);
    // A quarter of a second's worth at once (3 for Free), no more while the clock stands still.
    await rx.waitFor(3);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received).toHaveLength(3);
    // Then as the clock moves: never more than 10 in any second of it. The seconds (-100, 900],
    // (900, 1900], ... cover the clock, so by the end of the k-th at most 10k have gone.
    let movedMs = 0;
    for (let step = 1; step <= 70 && rx.received.length < 50; step++) {
      s.clock.advance(100);
      movedMs += 100;
      await new Promise((r) => setTimeout(r, 25));
      expect(rx.received.length).toBeLessThanOrEqual(10 * (Math.floor((movedMs + 100) / 1000) + 1));
    }
    await rx.waitFor(50);
    // Nothing lost, and the limit set the pace: no more than 40 could go in the clock's first four seconds.
    expect(movedMs).toBeGreaterThanOrEqual(4000);
    expect(new Set(rx.received.map((r) => r.json.event_id)).size).toBe(50);
    expect(dead.received.length).toBeGreaterThan(0);
  });

  it("sends a customer's deliveries at once while another customer's endpoint on the same host holds many connections open", async () => {
    const s = await setup();
    const rx = await s.receiver();
    let slowClosed = 0;
    // The slow customer's path never answers; its requests stay open until the dispatcher's own timeout.
    rx.respond((r, res) => {
      if (!r.headers['x-service-event'] || !res.req.url?.endsWith('/slow')) return 200;
      res.on('close', () => (slowClosed += 1));
      return null;
    });
    const slow = await s.customer('enterprise');
    const devices = [];
    for (let i = 0; i < 24; i++) devices.push(await s.device(slow, `S${i}`));
    await s.endpoint(slow, rx, ['position.updated'], `${rx.url}/slow`);
    for (const d of devices) await s.fixes(d, 1);
    // One request per lane (device) in flight: more than a shared pool of 16 sockets per host would allow.
    await until(() => rx.received.length >= devices.length, 20_000, 'every slow lane in flight');

    const other = await s.customer('pro');
    const dev = await s.device(other, 'O1');
    await s.endpoint(other, rx, ['position.updated'], `${rx.url}/fast`);
    await s.fixes(dev, 1);
    await until(() => rx.received.some((r) => r.json?.device_id === dev.deviceId), 20_000, "the other customer's delivery");
    // It went out beside the held ones, not after one of them timed out and freed a socket.
    expect(slowClosed).toBe(0);
  });
});
