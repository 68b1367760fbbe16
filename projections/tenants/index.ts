/**
 * Customers, their API keys and OAuth clients and tokens (hashes only), for
 * authentication and plan limits.
 */
import type Database from 'better-sqlite3';
import { assertNever } from '../../core/events.js';
import { isCommandAreaEvent } from '../../core/events/commands.js';
import type { Projection } from '../projection.js';

/** Expired tokens of a client are dropped when it is issued a new one, a day after they expired. */
const EXPIRED_TOKEN_RETENTION_MS = 86_400_000;

export const tenantsProjection: Projection = {
  name: 'tenants',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS customers (
        customer_id TEXT PRIMARY KEY, name TEXT NOT NULL, plan TEXT NOT NULL, speed_limit_kmh REAL,
        created_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS customer_rate_limits (
        customer_id TEXT PRIMARY KEY, per_minute INTEGER NOT NULL, burst INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS api_keys (
        key_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, name TEXT NOT NULL, scopes TEXT NOT NULL,
        secret_sha256 TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL, revoked_at INTEGER);
      CREATE INDEX IF NOT EXISTS api_keys_by_customer ON api_keys (customer_id, key_id);
      CREATE TABLE IF NOT EXISTS api_key_usage (key_id TEXT PRIMARY KEY, last_used_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS oauth_clients (
        client_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, name TEXT NOT NULL, scopes TEXT NOT NULL,
        secret_sha256 TEXT NOT NULL, created_at INTEGER NOT NULL, deleted_at INTEGER);
      CREATE INDEX IF NOT EXISTS oauth_clients_by_customer ON oauth_clients (customer_id, client_id);
      CREATE TABLE IF NOT EXISTS oauth_tokens (
        token_sha256 TEXT PRIMARY KEY, client_id TEXT NOT NULL, customer_id TEXT NOT NULL, scopes TEXT NOT NULL,
        issued_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, revoked_at INTEGER);
      CREATE INDEX IF NOT EXISTS oauth_tokens_by_client ON oauth_tokens (client_id, expires_at);`);
  },
  prepare(db: Database.Database) {
    const insertCustomer = db.prepare(
      'INSERT OR REPLACE INTO customers (customer_id, name, plan, speed_limit_kmh, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    const setRateLimit = db.prepare(
      `INSERT INTO customer_rate_limits (customer_id, per_minute, burst) VALUES (?, ?, ?)
       ON CONFLICT(customer_id) DO UPDATE SET per_minute = excluded.per_minute, burst = excluded.burst`,
    );
    const clearRateLimit = db.prepare('DELETE FROM customer_rate_limits WHERE customer_id = ?');
    const insertKey = db.prepare(
      `INSERT OR REPLACE INTO api_keys (key_id, customer_id, name, scopes, secret_sha256, created_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL)`,
    );
    const revokeKey = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND customer_id = ?');
    const keyUsed = db.prepare(
      `INSERT INTO api_key_usage (key_id, last_used_at) VALUES (?, ?)
       ON CONFLICT(key_id) DO UPDATE SET last_used_at = max(last_used_at, excluded.last_used_at)`,
    );
    const insertClient = db.prepare(
      `INSERT OR REPLACE INTO oauth_clients (client_id, customer_id, name, scopes, secret_sha256, created_at, deleted_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL)`,
    );
    const deleteClient = db.prepare('UPDATE oauth_clients SET deleted_at = ? WHERE client_id = ? AND customer_id = ?');
    const revokeClientTokens = db.prepare(
      'UPDATE oauth_tokens SET revoked_at = ? WHERE client_id = ? AND customer_id = ? AND revoked_at IS NULL',
    );
    const insertToken = db.prepare(
      `INSERT OR IGNORE INTO oauth_tokens (token_sha256, client_id, customer_id, scopes, issued_at, expires_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL)`,
    );
    // Housekeeping on the event's own time (not the wall clock), so replays build the same table.
    const pruneTokens = db.prepare('DELETE FROM oauth_tokens WHERE client_id = ? AND expires_at < ?');
    return (e) => {
      if (isCommandAreaEvent(e)) return;
      switch (e.type) {
        case 'CustomerCreated':
          insertCustomer.run(e.data.customer_id, e.data.name, e.data.plan, e.data.speed_limit_kmh ?? null, e.data.created_at);
          return;
        case 'CustomerRateLimitSet':
          if (e.data.per_minute === null || e.data.burst === null) clearRateLimit.run(e.data.customer_id);
          else setRateLimit.run(e.data.customer_id, e.data.per_minute, e.data.burst);
          return;
        case 'ApiKeyCreated':
          insertKey.run(
            e.data.key_id,
            e.data.customer_id,
            e.data.name,
            JSON.stringify(e.data.scopes),
            e.data.secret_sha256,
            e.data.created_at,
          );
          return;
        case 'ApiKeyRevoked':
          revokeKey.run(e.data.revoked_at, e.data.key_id, e.data.customer_id);
          return;
        case 'ApiKeysUsed':
          for (const k of e.data.keys) keyUsed.run(k.key_id, k.last_used_at);
          return;
        case 'OAuthClientCreated':
          insertClient.run(
            e.data.client_id,
            e.data.customer_id,
            e.data.name,
            JSON.stringify(e.data.scopes),
            e.data.secret_sha256,
            e.data.created_at,
          );
          return;
        case 'OAuthClientDeleted':
          deleteClient.run(e.data.deleted_at, e.data.client_id, e.data.customer_id);
          revokeClientTokens.run(e.data.deleted_at, e.data.client_id, e.data.customer_id);
          return;
        case 'OAuthTokenIssued':
          pruneTokens.run(e.data.client_id, e.data.issued_at - EXPIRED_TOKEN_RETENTION_MS);
          insertToken.run(
            e.data.token_sha256,
            e.data.client_id,
            e.data.customer_id,
            JSON.stringify(e.data.scopes),
            e.data.issued_at,
            e.data.expires_at,
          );
          return;
        case 'GeofenceCreated':
        case 'GeofenceUpdated':
        case 'GeofenceDeleted':
        case 'DriverCreated':
        case 'ImeiClaimed':
        case 'TerminalClaimed':
        case 'CustomerWebhookLimitSet':
        case 'ImeiReleased':
        case 'TerminalReleased':
        case 'DriverExternalIdClaimed':
        case 'DeviceRegistered':
        case 'DeviceUpdated':
        case 'DeviceConnected':
        case 'DeviceDisconnected':
        case 'TerminalAuthCodeIssued':
        case 'DeviceProtocolBound':
        case 'DeviceLoginRefused':
        case 'DeviceConnectionReplaced':
        case 'PositionRecorded':
        case 'StatusReported':
        case 'AlarmReported':
        case 'DeviceEventRaised':
        case 'UnknownDeviceSeen':
        case 'CustomerUserCreated':
        case 'UserEmailClaimed':
        case 'SessionStarted':
        case 'SessionEnded':
        case 'WebhookEndpointCreated':
        case 'WebhookEndpointUpdated':
        case 'WebhookSecretRotated':
        case 'WebhookEndpointDisabled':
        case 'WebhookEndpointDeleted':
        case 'WebhookRedeliveryRequested':
        case 'WebhookReplayRequested':
        case 'TripRulesSet':
        case 'AccumulatorsSet':
          return;
        default:
          assertNever(e);
      }
    };
  },
};
