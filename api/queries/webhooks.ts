/** Webhook endpoint queries; every one is scoped to the customer. */
import type Database from 'better-sqlite3';
import { webhookEndpointFromDb, type WebhookEndpointDbRow, type WebhookEndpointRow } from '../../projections/webhook-endpoints/index.js';
import { stmt } from './statements.js';
import { boundLimit } from '../../core/sqlite-limit.js';

export function webhookById(db: Database.Database, customerId: string, webhookId: string): WebhookEndpointRow | null {
  const row = stmt(db, 'SELECT * FROM webhook_endpoints WHERE webhook_id = ? AND customer_id = ?').get(webhookId, customerId) as WebhookEndpointDbRow | undefined;
  return row ? webhookEndpointFromDb(row) : null;
}

/** One page in id order, strictly after `afterId`. */
export function webhookPage(db: Database.Database, customerId: string, afterId: string | null, limit: number): WebhookEndpointRow[] {
  const rows = stmt(db, `SELECT * FROM webhook_endpoints WHERE customer_id = ? AND webhook_id > ? ORDER BY webhook_id LIMIT ${boundLimit()}`).all(
    customerId,
    afterId ?? '',
    limit,
  ) as WebhookEndpointDbRow[];
  return rows.map(webhookEndpointFromDb);
}
