/** The webhook endpoints read model: configuration and state of every endpoint, for the management API. */
import type Database from 'better-sqlite3';
import type { Projection } from '../projection.js';
import { evolveWebhookEndpoint, type WebhookEndpointRow } from '../../core/webhook-endpoint.js';

export { evolveWebhookEndpoint, type WebhookEndpointRow } from '../../core/webhook-endpoint.js';

const COLUMNS = [
  'webhook_id', 'customer_id', 'url', 'events', 'device_ids', 'description', 'enabled', 'disabled_reason', 'disabled_detail',
  'disabled_at', 'secret_rotated_at', 'previous_secret_valid_until', 'created_at', 'updated_at',
] as const;

/** A stored row: lists as JSON text, the flag as 0/1. */
export type WebhookEndpointDbRow = Omit<WebhookEndpointRow, 'events' | 'device_ids' | 'enabled'> & {
  events: string;
  device_ids: string | null;
  enabled: number;
};

export function webhookEndpointFromDb(r: WebhookEndpointDbRow): WebhookEndpointRow {
  return {
    ...r,
    events: JSON.parse(r.events) as string[],
    device_ids: r.device_ids === null ? null : (JSON.parse(r.device_ids) as string[]),
    enabled: r.enabled === 1,
  };
}

function toDb(row: WebhookEndpointRow): WebhookEndpointDbRow {
  return { ...row, events: JSON.stringify(row.events), device_ids: row.device_ids === null ? null : JSON.stringify(row.device_ids), enabled: row.enabled ? 1 : 0 };
}

const WEBHOOK_EVENTS = new Set(['WebhookEndpointCreated', 'WebhookEndpointUpdated', 'WebhookSecretRotated', 'WebhookEndpointDisabled', 'WebhookEndpointDeleted']);

export const webhookEndpointsProjection: Projection = {
  name: 'webhook-endpoints',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS webhook_endpoints (
        webhook_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, url TEXT NOT NULL, events TEXT NOT NULL, device_ids TEXT,
        description TEXT, enabled INTEGER NOT NULL, disabled_reason TEXT, disabled_detail TEXT, disabled_at INTEGER,
        secret_rotated_at INTEGER, previous_secret_valid_until INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS webhook_endpoints_by_customer ON webhook_endpoints (customer_id, webhook_id);`);
  },
  prepare(db: Database.Database) {
    const get = db.prepare('SELECT * FROM webhook_endpoints WHERE webhook_id = ?');
    const put = db.prepare(`INSERT OR REPLACE INTO webhook_endpoints (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => '@' + c).join(', ')})`);
    // Deleted endpoints leave no row: the API answers 404 for them like for ids that never existed.
    const remove = db.prepare('DELETE FROM webhook_endpoints WHERE webhook_id = ?');
    return (e) => {
      if (!WEBHOOK_EVENTS.has(e.type) || !('webhook_id' in e.data)) return;
      const stored = get.get(e.data.webhook_id) as WebhookEndpointDbRow | undefined;
      const before = stored ? webhookEndpointFromDb(stored) : null;
      const after = evolveWebhookEndpoint(before, e);
      if (after === before) return;
      if (after) put.run(toDb(after));
      else remove.run(e.data.webhook_id);
    };
  },
};
