import { describe, expect, it } from 'vitest';
import { createCustomer, setCustomerRateLimit, setCustomerWebhookLimit } from '../../../core/commands/customers.js';
import { sha256Hex } from '../../../core/credentials.js';
import { streams } from '../../../core/streams.js';
import { rejection, useCommandStore } from '../../support/command-store.js';

const open = useCommandStore();

describe('customer commands', () => {
  it('creates a customer with one full-access key whose secret is stored only as a hash', async () => {
    const { store, clock } = open();
    const created = await createCustomer(store, clock, { name: 'Acme', plan: 'pro' });
    const events = await store.readStream(streams.tenant(created.customer_id));
    expect(events.map((e) => e.type)).toEqual(['CustomerCreated', 'ApiKeyCreated']);
    expect(events[1]).toMatchObject({ data: { key_id: created.key_id, secret_sha256: sha256Hex(created.api_key) } });
    expect(JSON.stringify(events.map((e) => e.data))).not.toContain(created.api_key);
  });

  it('sets and clears an agreed rate limit for an existing customer', async () => {
    const { store, clock } = open();
    const { customer_id } = await createCustomer(store, clock, { name: 'Big', plan: 'enterprise' });
    await setCustomerRateLimit(store, clock, customer_id, { per_minute: 6000, burst: 100 });
    await setCustomerRateLimit(store, clock, customer_id, null);
    const limits = (await store.readStream(streams.tenant(customer_id))).filter((e) => e.type === 'CustomerRateLimitSet').map((e) => e.data);
    expect(limits).toMatchObject([{ per_minute: 6000, burst: 100 }, { per_minute: null, burst: null }]);
  });

  it('refuses an agreement for a customer that does not exist, or one that is not whole requests', async () => {
    const { store, clock } = open();
    const { customer_id } = await createCustomer(store, clock, { name: 'Real', plan: 'enterprise' });
    expect(await rejection(setCustomerRateLimit(store, clock, 'cus_01jbz3k8x6m2q9w4e7r5t1y0ha', { per_minute: 60, burst: 10 }))).toMatchObject({ kind: 'not_found' });
    expect(await rejection(setCustomerRateLimit(store, clock, customer_id, { per_minute: 0, burst: 10 }))).toMatchObject({ kind: 'invalid' });
    expect(await rejection(setCustomerRateLimit(store, clock, customer_id, { per_minute: 60, burst: 1.5 }))).toMatchObject({ kind: 'invalid' });
  });

  it('sets and clears an agreed webhook rate, and refuses one that is not a whole number in range or a customer that does not exist', async () => {
    const { store, clock } = open();
    const { customer_id } = await createCustomer(store, clock, { name: 'Big', plan: 'enterprise' });
    await setCustomerWebhookLimit(store, clock, customer_id, 2500);
    await setCustomerWebhookLimit(store, clock, customer_id, null);
    const limits = (await store.readStream(streams.tenant(customer_id))).filter((e) => e.type === 'CustomerWebhookLimitSet').map((e) => e.data);
    expect(limits).toMatchObject([{ per_s: 2500 }, { per_s: null }]);
    for (const bad of [0, 1.5, 100_001]) expect(await rejection(setCustomerWebhookLimit(store, clock, customer_id, bad))).toMatchObject({ kind: 'invalid' });
    expect(await rejection(setCustomerWebhookLimit(store, clock, 'cus_01jbz3k8x6m2q9w4e7r5t1y0ha', 10))).toMatchObject({ kind: 'not_found' });
  });
});
