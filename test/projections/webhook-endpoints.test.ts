/** The webhook endpoints read model: what the management API shows of an endpoint's stream. */
import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../core/events.js';
import { evolveWebhookEndpoint, webhookEndpointFromDb, webhookEndpointsProjection, type WebhookEndpointDbRow, type WebhookEndpointRow } from '../../projections/webhook-endpoints/index.js';
import { readModelDb } from '../support/read-model-db.js';

const ids = { webhook_id: 'whk_1', customer_id: 'cus_1' };
const created: DomainEvent = {
  type: 'WebhookEndpointCreated',
  data: { ...ids, url: 'https://hooks.example.com/x', events: ['alarm.*'], device_ids: null, description: 'ops', enabled: true, secret_ciphertext: 'v1.sealed', created_at: 1000 },
};
const update = (changes: object, at: number): DomainEvent => ({ type: 'WebhookEndpointUpdated', data: { ...ids, ...changes, updated_at: at } });
const platformDisabled: DomainEvent = { type: 'WebhookEndpointDisabled', data: { ...ids, reason: 'gone', detail: 'receiver answered 410', disabled_at: 3000 } };

function fold(events: DomainEvent[]): WebhookEndpointRow | null {
  return events.reduce<WebhookEndpointRow | null>((row, e) => evolveWebhookEndpoint(row, e), null);
}

describe('evolveWebhookEndpoint', () => {
  it('shows the configuration, never the secret, and applies merge-patches', () => {
    const row = fold([created, update({ events: ['*'], description: null }, 2000)]);
    expect(row).toMatchObject({ url: 'https://hooks.example.com/x', events: ['*'], description: null, enabled: true, created_at: 1000, updated_at: 2000 });
    expect(JSON.stringify(row)).not.toContain('sealed');
  });

  it('tells a platform disable from the customer switching it off, and lets the customer turn it back on', () => {
    expect(fold([created, platformDisabled])).toMatchObject({ enabled: false, disabled_reason: 'gone', disabled_detail: 'receiver answered 410', disabled_at: 3000 });
    expect(fold([created, update({ enabled: false }, 2000)])).toMatchObject({ enabled: false, disabled_reason: null, disabled_at: 2000 });
    expect(fold([created, platformDisabled, update({ enabled: true }, 4000)])).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
  });

  it('records a rotation without its secret', () => {
    const rotated: DomainEvent = { type: 'WebhookSecretRotated', data: { ...ids, secret_ciphertext: 'v1.new', previous_valid_until: 9000, rotated_at: 5000 } };
    expect(fold([created, rotated])).toMatchObject({ secret_rotated_at: 5000, previous_secret_valid_until: 9000 });
  });

  it('is gone after deletion, and ignores events of endpoints it never saw created', () => {
    expect(fold([created, { type: 'WebhookEndpointDeleted', data: { ...ids, deleted_at: 6000 } }])).toBeNull();
    expect(fold([platformDisabled])).toBeNull();
  });
});

describe('webhook endpoints table', () => {
  it('stores rows round-trip and removes deleted endpoints', () => {
    const m = readModelDb([webhookEndpointsProjection]);
    m.apply(created);
    m.apply(update({ device_ids: ['dev_1', 'dev_2'] }, 2000));
    const stored = m.db.prepare('SELECT * FROM webhook_endpoints WHERE webhook_id = ?').get('whk_1') as WebhookEndpointDbRow;
    expect(webhookEndpointFromDb(stored)).toEqual(fold([created, update({ device_ids: ['dev_1', 'dev_2'] }, 2000)]));
    expect(Object.values(stored).join('|')).not.toContain('sealed');
    m.apply({ type: 'WebhookEndpointDeleted', data: { ...ids, deleted_at: 6000 } });
    expect(m.db.prepare('SELECT count(*) AS n FROM webhook_endpoints').get()).toEqual({ n: 0 });
  });
});
