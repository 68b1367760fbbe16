import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { registerDevice } from '../../../core/commands/devices.js';
import { createWebhook, deleteWebhook, rotateWebhookSecret, updateWebhook } from '../../../core/commands/webhooks.js';
import { randomUuid } from '../../../core/ids.js';
import { imeiFrom } from '../../../core/imei.js';
import { SecretBox } from '../../../core/secret-box.js';
import { streams } from '../../../core/streams.js';
import { T0, rejection, useCommandStore } from '../../support/command-store.js';

const open = useCommandStore();
const box = SecretBox.fromKey(randomBytes(32));
const strict = { box, allowPrivate: false };
const dev = { box, allowPrivate: true };
const URL_OK = 'https://hooks.example.com/fleet';

async function stored(store: ReturnType<typeof open>['store'], id: string) {
  return store.readStream(streams.webhook(id));
}

describe('createWebhook', () => {
  it('returns a whsec_ secret once and stores it only sealed', async () => {
    const { store, clock } = open();
    const { webhook_id, secret } = await createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['geofence.*', 'alarm.*'] });
    expect(webhook_id).toMatch(/^whk_/);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const [created] = await stored(store, webhook_id);
    expect(created).toMatchObject({
      type: 'WebhookEndpointCreated',
      data: { customer_id: 'cus_a', url: URL_OK, events: ['geofence.*', 'alarm.*'], device_ids: null, description: null, enabled: true, created_at: T0 },
    });
    expect(JSON.stringify(created?.data)).not.toContain(secret);
    expect(JSON.stringify(created?.data)).not.toContain(secret.slice(6));
    if (created?.type !== 'WebhookEndpointCreated') throw new Error('unreachable');
    expect(box.open(created.data.secret_ciphertext)).toBe(secret);
  });

  it('takes exact kinds, prefix.* and *, and refuses anything else with a pointer to it', async () => {
    const { store, clock } = open();
    for (const events of [['*'], ['event.*', 'position.updated'], ['alarm.dsm.*']]) {
      await createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events });
    }
    expect(await rejection(createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['geofence.enter', 'geofence.leave'] }))).toMatchObject({
      kind: 'invalid',
      field: '/events/1',
    });
    expect(await rejection(createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['nope.*'] }))).toMatchObject({ field: '/events/0' });
    expect(await rejection(createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: [] }))).toMatchObject({ field: '/events' });
  });

  it('refuses private and plain-http URLs unless the development setting allows them, saying why', async () => {
    const { store, clock } = open();
    for (const url of ['http://hooks.example.com/x', 'https://127.0.0.1/x', 'https://169.254.169.254/latest', 'https://localhost/x', 'https://10.1.2.3/x']) {
      const err = await rejection(createWebhook(store, clock, strict, { customer_id: 'cus_a', url, events: ['*'] }));
      expect(err, url).toMatchObject({ kind: 'invalid', field: '/url', detail: expect.stringMatching(/url/) });
    }
    await expect(createWebhook(store, clock, dev, { customer_id: 'cus_a', url: 'http://127.0.0.1:9999/hook', events: ['*'] })).resolves.toMatchObject({
      webhook_id: expect.any(String),
    });
    expect(await rejection(createWebhook(store, clock, dev, { customer_id: 'cus_a', url: 'ftp://127.0.0.1/x', events: ['*'] }))).toMatchObject({ field: '/url' });
  });

  it("takes only the customer's own devices", async () => {
    const { store, clock } = open();
    const { device_id: mine } = await registerDevice(store, clock, { customer_id: 'cus_a', imei: imeiFrom('35630704244101'), model: 'FMB920' });
    const { device_id: theirs } = await registerDevice(store, clock, { customer_id: 'cus_b', imei: imeiFrom('49015420323751'), model: 'FMB920' });
    const { webhook_id } = await createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['*'], device_ids: [mine, mine] });
    expect((await stored(store, webhook_id))[0]).toMatchObject({ data: { device_ids: [mine] } });
    const err = await rejection(createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['*'], device_ids: [mine, theirs] }));
    expect(err).toMatchObject({ kind: 'invalid', field: '/device_ids/1' });
    expect(await rejection(createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['*'], device_ids: ['dev_made_up'] }))).toMatchObject({
      field: '/device_ids/0',
    });
  });
});

describe('updateWebhook', () => {
  it('writes only the fields that change, and nothing when nothing does', async () => {
    const { store, clock } = open();
    const { webhook_id } = await createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['*'], description: 'ops' });
    clock.advance(1000);
    const position = await updateWebhook(store, clock, strict, {
      customer_id: 'cus_a',
      webhook_id,
      changes: { url: URL_OK, events: ['alarm.*'], description: 'ops', enabled: false },
    });
    expect(position).not.toBeNull();
    expect((await stored(store, webhook_id))[1]).toMatchObject({
      type: 'WebhookEndpointUpdated',
      data: { webhook_id, customer_id: 'cus_a', events: ['alarm.*'], enabled: false, updated_at: T0 + 1000 },
    });
    expect((await stored(store, webhook_id))[1]!.data).not.toHaveProperty('url');
    expect((await stored(store, webhook_id))[1]!.data).not.toHaveProperty('description');
    expect(await updateWebhook(store, clock, strict, { customer_id: 'cus_a', webhook_id, changes: { events: ['alarm.*'], enabled: false } })).toBeNull();
    expect(await stored(store, webhook_id)).toHaveLength(2);
  });

  it('validates like creation and clears with null', async () => {
    const { store, clock } = open();
    const { webhook_id } = await createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['*'], description: 'ops' });
    expect(await rejection(updateWebhook(store, clock, strict, { customer_id: 'cus_a', webhook_id, changes: { events: ['*', 'bad'] } }))).toMatchObject({
      field: '/events/1',
    });
    expect(await rejection(updateWebhook(store, clock, strict, { customer_id: 'cus_a', webhook_id, changes: { url: 'https://192.168.1.1/' } }))).toMatchObject({
      field: '/url',
    });
    await updateWebhook(store, clock, strict, { customer_id: 'cus_a', webhook_id, changes: { description: null } });
    expect((await stored(store, webhook_id)).at(-1)).toMatchObject({ type: 'WebhookEndpointUpdated', data: { description: null } });
  });

  it('re-enables an endpoint the platform disabled when the customer sets enabled: true', async () => {
    const { store, clock } = open();
    const { webhook_id } = await createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['*'] });
    await store.appendToStream(streams.webhook(webhook_id), [
      { id: randomUuid(), type: 'WebhookEndpointDisabled', data: { webhook_id, customer_id: 'cus_a', reason: 'gone', detail: 'receiver answered 410', disabled_at: T0 } },
    ]);
    expect(await updateWebhook(store, clock, strict, { customer_id: 'cus_a', webhook_id, changes: { enabled: true } })).not.toBeNull();
    expect((await stored(store, webhook_id)).at(-1)).toMatchObject({ type: 'WebhookEndpointUpdated', data: { enabled: true } });
  });

  it("treats another customer's endpoint as not found and writes nothing", async () => {
    const { store, clock } = open();
    const { webhook_id } = await createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['*'] });
    expect(await rejection(updateWebhook(store, clock, strict, { customer_id: 'cus_b', webhook_id, changes: { enabled: false } }))).toMatchObject({
      kind: 'not_found',
    });
    expect(await rejection(deleteWebhook(store, clock, { customer_id: 'cus_b', webhook_id }))).toMatchObject({ kind: 'not_found' });
    expect(await rejection(rotateWebhookSecret(store, clock, strict, { customer_id: 'cus_b', webhook_id }))).toMatchObject({ kind: 'not_found' });
    expect(await stored(store, webhook_id)).toHaveLength(1);
  });
});

describe('deleteWebhook', () => {
  it('deletes once; afterwards every command finds nothing', async () => {
    const { store, clock } = open();
    const { webhook_id } = await createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['*'] });
    await deleteWebhook(store, clock, { customer_id: 'cus_a', webhook_id });
    expect((await stored(store, webhook_id)).map((e) => e.type)).toEqual(['WebhookEndpointCreated', 'WebhookEndpointDeleted']);
    expect(await rejection(deleteWebhook(store, clock, { customer_id: 'cus_a', webhook_id }))).toMatchObject({ kind: 'not_found' });
    expect(await rejection(updateWebhook(store, clock, strict, { customer_id: 'cus_a', webhook_id, changes: { enabled: false } }))).toMatchObject({
      kind: 'not_found',
    });
    expect(await rejection(rotateWebhookSecret(store, clock, strict, { customer_id: 'cus_a', webhook_id }))).toMatchObject({ kind: 'not_found' });
  });

  it('still deletes when another writer appended to the stream meanwhile', async () => {
    const { store, clock } = open();
    const { webhook_id } = await createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['*'] });
    await store.appendToStream(streams.webhook(webhook_id), [
      { id: randomUuid(), type: 'WebhookRedeliveryRequested', data: { webhook_id, customer_id: 'cus_a', delivery_id: 'dlv_x', requested_at: T0 } },
    ]);
    await deleteWebhook(store, clock, { customer_id: 'cus_a', webhook_id });
    expect((await stored(store, webhook_id)).at(-1)?.type).toBe('WebhookEndpointDeleted');
  });
});

describe('rotateWebhookSecret', () => {
  it('returns a new secret once, sealed in the log, with the previous one valid for the grace period', async () => {
    const { store, clock } = open();
    const { webhook_id, secret: first } = await createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['*'] });
    clock.advance(5000);
    const rotated = await rotateWebhookSecret(store, clock, strict, { customer_id: 'cus_a', webhook_id, grace_period_s: 3600 });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(first);
    expect(rotated.previous_valid_until).toBe(T0 + 5000 + 3_600_000);
    const event = (await stored(store, webhook_id)).at(-1)!;
    expect(event).toMatchObject({ type: 'WebhookSecretRotated', data: { previous_valid_until: T0 + 5000 + 3_600_000, rotated_at: T0 + 5000 } });
    expect(JSON.stringify(event.data)).not.toContain(rotated.secret);
    if (event.type !== 'WebhookSecretRotated') throw new Error('unreachable');
    expect(box.open(event.data.secret_ciphertext)).toBe(rotated.secret);
  });

  it('defaults to 24 hours of grace and takes 0 to 7 days', async () => {
    const { store, clock } = open();
    const { webhook_id } = await createWebhook(store, clock, strict, { customer_id: 'cus_a', url: URL_OK, events: ['*'] });
    expect((await rotateWebhookSecret(store, clock, strict, { customer_id: 'cus_a', webhook_id })).previous_valid_until).toBe(T0 + 86_400_000);
    expect((await rotateWebhookSecret(store, clock, strict, { customer_id: 'cus_a', webhook_id, grace_period_s: 0 })).previous_valid_until).toBe(T0);
    for (const grace of [-1, 7 * 86_400 + 1, 1.5]) {
      expect(await rejection(rotateWebhookSecret(store, clock, strict, { customer_id: 'cus_a', webhook_id, grace_period_s: grace }))).toMatchObject({
        kind: 'invalid',
        field: '/grace_period_s',
      });
    }
  });
});
