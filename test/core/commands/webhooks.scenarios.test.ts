/** Webhook endpoint and delivery commands as given / when / then on the endpoint's stream. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_REPLAY_RANGE_MS, disableWebhookEndpoint, requestRedelivery, requestReplay } from '../../../core/commands/webhook-delivery.js';
import { createWebhook, deleteWebhook, rotateWebhookSecret, updateWebhook } from '../../../core/commands/webhooks.js';
import type { DomainEvent } from '../../../core/events.js';
import { SecretBox } from '../../../core/secret-box.js';
import { streams } from '../../../core/streams.js';
import { T0, given } from '../../support/given-when-then.js';

const box = SecretBox.fromKey(randomBytes(32));
const settings = { box, allowPrivate: false };
const URL_OK = 'https://hooks.example.com/fleet';
const STREAM = streams.webhook('whk_1');
const created: DomainEvent = {
  type: 'WebhookEndpointCreated',
  data: { webhook_id: 'whk_1', customer_id: 'cus_a', url: URL_OK, events: ['*'], device_ids: null, description: 'ops', enabled: true, secret_ciphertext: 'sealed', created_at: T0 },
};
const endpoint = { [STREAM]: [created] };
const disabled: DomainEvent = { type: 'WebhookEndpointDisabled', data: { webhook_id: 'whk_1', customer_id: 'cus_a', reason: 'gone', detail: '410', disabled_at: T0 } };
const deleted: DomainEvent = { type: 'WebhookEndpointDeleted', data: { webhook_id: 'whk_1', customer_id: 'cus_a', deleted_at: T0 } };
const ids = { customer_id: 'cus_a', webhook_id: 'whk_1' };

/** Every command that needs the endpoint, run against one history. */
const needingTheEndpoint = {
  update: (history: Parameters<typeof given>[0], customerId = 'cus_a') =>
    given(history).when((store, clock) => updateWebhook(store, clock, settings, { ...ids, customer_id: customerId, changes: { enabled: false } })),
  delete: (history: Parameters<typeof given>[0], customerId = 'cus_a') => given(history).when((store, clock) => deleteWebhook(store, clock, { ...ids, customer_id: customerId })),
  rotate: (history: Parameters<typeof given>[0], customerId = 'cus_a') =>
    given(history).when((store, clock) => rotateWebhookSecret(store, clock, settings, { ...ids, customer_id: customerId })),
  redeliver: (history: Parameters<typeof given>[0], customerId = 'cus_a') =>
    given(history).when((store, clock) => requestRedelivery(store, clock, { ...ids, customer_id: customerId, delivery_id: 'dlv_1' })),
  replay: (history: Parameters<typeof given>[0], customerId = 'cus_a') =>
    given(history).when((store, clock) => requestReplay(store, clock, { ...ids, customer_id: customerId, from: T0 - 1000, to: T0, events: null })),
};

describe('webhook endpoint commands', () => {
  it('creates an endpoint with its secret sealed, devices and patterns deduplicated', async () => {
    const devices = { [streams.device('dev_1')]: [{ type: 'DeviceRegistered', data: { device_id: 'dev_1', customer_id: 'cus_a', imei: '1', model: 'm', name: null, group_id: null, driver_id: null, terminal_id: null, created_at: T0 } } as DomainEvent] };
    const then = await given(devices).when((store, clock) =>
      createWebhook(store, clock, settings, { customer_id: 'cus_a', url: URL_OK, events: ['alarm.*', 'alarm.*'], device_ids: ['dev_1', 'dev_1'], description: '  ' }),
    );
    const { webhook_id, secret } = then.result!;
    const stored = then.appended[streams.webhook(webhook_id)]!;
    expect(stored).toEqual([
      {
        type: 'WebhookEndpointCreated',
        data: { webhook_id, customer_id: 'cus_a', url: URL_OK, events: ['alarm.*'], device_ids: ['dev_1'], description: null, enabled: true, secret_ciphertext: expect.any(String), created_at: T0 },
      },
    ]);
    expect(box.open((stored[0]!.data as { secret_ciphertext: string }).secret_ciphertext)).toBe(secret);
    expect(Object.keys(then.appended)).toEqual([streams.webhook(webhook_id)]);
  });

  it("refuses another customer's device, naming it", async () => {
    const then = await given().when((store, clock) => createWebhook(store, clock, settings, { customer_id: 'cus_a', url: URL_OK, events: ['*'], device_ids: ['dev_x'] }));
    expect(then.refused()).toMatchObject({ kind: 'invalid', code: 'validation_failed', field: '/device_ids/0' });
    expect(then.appended).toEqual({});
  });

  it('updates only the fields that change; enabled: true lifts a platform disable', async () => {
    const edit = await given(endpoint).when((store, clock) =>
      updateWebhook(store, clock, settings, { ...ids, changes: { url: URL_OK, events: ['alarm.*'], description: 'ops', enabled: true } }),
    );
    expect(edit.appended).toEqual({ [STREAM]: [{ type: 'WebhookEndpointUpdated', data: { ...ids, events: ['alarm.*'], updated_at: T0 } }] });
    const same = await given(endpoint).when((store, clock) => updateWebhook(store, clock, settings, { ...ids, changes: { enabled: true, events: ['*'] } }));
    expect(same.result).toBeNull();
    expect(same.appended).toEqual({});
    const lift = await given({ [STREAM]: [created, disabled] }).when((store, clock) => updateWebhook(store, clock, settings, { ...ids, changes: { enabled: true } }));
    expect(lift.appended).toEqual({ [STREAM]: [{ type: 'WebhookEndpointUpdated', data: { ...ids, enabled: true, updated_at: T0 } }] });
  });

  it('checks the changes before the endpoint', async () => {
    const then = await given().when((store, clock) => updateWebhook(store, clock, settings, { ...ids, changes: { url: 'http://hooks.example.com/' } }));
    expect(then.refused()).toMatchObject({ kind: 'invalid', field: '/url' });
  });

  it('deletes an endpoint', async () => {
    const then = await needingTheEndpoint.delete(endpoint);
    expect(then.appended).toEqual({ [STREAM]: [{ type: 'WebhookEndpointDeleted', data: { ...ids, deleted_at: T0 } }] });
  });

  it('rotates the secret, sealing the new one, the previous valid for the grace period', async () => {
    const then = await given(endpoint).when((store, clock) => rotateWebhookSecret(store, clock, settings, { ...ids, grace_period_s: 60 }));
    const { secret, previous_valid_until } = then.result!;
    expect(previous_valid_until).toBe(T0 + 60_000);
    const [rotated] = then.appended[STREAM]!;
    expect(then.appended).toEqual({
      [STREAM]: [{ type: 'WebhookSecretRotated', data: { ...ids, secret_ciphertext: expect.any(String), previous_valid_until: T0 + 60_000, rotated_at: T0 } }],
    });
    expect(box.open((rotated!.data as { secret_ciphertext: string }).secret_ciphertext)).toBe(secret);
  });

  it('refuses a grace period out of range before looking at the endpoint', async () => {
    const then = await given().when((store, clock) => rotateWebhookSecret(store, clock, settings, { ...ids, grace_period_s: 7 * 86_400 + 1 }));
    expect(then.refused()).toMatchObject({ kind: 'invalid', code: 'validation_failed', field: '/grace_period_s' });
  });

  it("treats a deleted, an unknown or another customer's endpoint as not found in every command that needs it", async () => {
    for (const [name, run] of Object.entries(needingTheEndpoint)) {
      for (const then of [await run({ [STREAM]: [created, deleted] }), await run({}), await run(endpoint, 'cus_b')]) {
        expect(then.refused(), name).toMatchObject({ kind: 'not_found', code: 'not_found' });
        expect(then.appended, name).toEqual({});
      }
    }
  });
});

describe('webhook delivery commands', () => {
  it('requests a redelivery and a replay', async () => {
    const redelivery = await needingTheEndpoint.redeliver(endpoint);
    expect(redelivery.appended).toEqual({ [STREAM]: [{ type: 'WebhookRedeliveryRequested', data: { ...ids, delivery_id: 'dlv_1', requested_at: T0 } }] });
    const replay = await needingTheEndpoint.replay(endpoint);
    expect(replay.appended).toEqual({
      [STREAM]: [{ type: 'WebhookReplayRequested', data: { ...ids, from: T0 - 1000, to: T0, events: null, replay_id: replay.result!.replay_id, requested_at: T0 } }],
    });
  });

  it('refuses an empty or too long replay range, whatever the endpoint', async () => {
    for (const [from, to, code, field] of [
      [T0, T0, 'validation_failed', '/from'],
      [T0, T0 + MAX_REPLAY_RANGE_MS + 1, 'range_too_large', '/to'],
    ] as const) {
      const then = await given().when((store, clock) => requestReplay(store, clock, { ...ids, from, to, events: null }));
      expect(then.refused()).toMatchObject({ kind: 'invalid', code, field });
    }
  });

  it('disables an endpoint with the id and time delivery decided, stored once when appended again', async () => {
    const input = { ...ids, reason: 'gone' as const, detail: 'receiver answered 410' };
    const then = await given(endpoint).when(async (store, clock) => {
      await disableWebhookEndpoint(store, clock, input, { id: 'decided-1', at: T0 - 5 });
      return disableWebhookEndpoint(store, clock, input, { id: 'decided-1', at: T0 - 5 });
    });
    expect(then.appended).toEqual({ [STREAM]: [{ type: 'WebhookEndpointDisabled', data: { ...input, disabled_at: T0 - 5 } }] });
    const [event] = await then.store.readStream(STREAM, { direction: 'backwards', maxCount: 1 });
    expect(event!.id).toBe('decided-1');
  });

  it('disables at the clock when delivery decided no time', async () => {
    const input = { ...ids, reason: 'failing' as const, detail: 'failing for 3 days' };
    const then = await given(endpoint).when((store, clock) => disableWebhookEndpoint(store, clock, input));
    expect(then.appended).toEqual({ [STREAM]: [{ type: 'WebhookEndpointDisabled', data: { ...input, disabled_at: T0 } }] });
  });
});
