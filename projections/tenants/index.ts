/** Customers and their API keys (hashes only), for authentication and plan limits. */
import type Database from 'better-sqlite3';
import { assertNever } from '../../core/events.js';
import type { Projection } from '../projection.js';

export const tenantsProjection: Projection = {
  name: 'tenants',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS customers (
        customer_id TEXT PRIMARY KEY, name TEXT NOT NULL, plan TEXT NOT NULL, speed_limit_kmh REAL,
        created_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS api_keys (
        key_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, name TEXT NOT NULL, scopes TEXT NOT NULL,
        secret_sha256 TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL, revoked_at INTEGER);
      CREATE INDEX IF NOT EXISTS api_keys_by_customer ON api_keys (customer_id, key_id);`);
  },
  prepare(db: Database.Database) {
    const insertCustomer = db.prepare(
      'INSERT OR REPLACE INTO customers (customer_id, name, plan, speed_limit_kmh, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    const insertKey = db.prepare(
      `INSERT OR REPLACE INTO api_keys (key_id, customer_id, name, scopes, secret_sha256, created_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL)`,
    );
    const revokeKey = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND customer_id = ?');
    return (e) => {
      switch (e.type) {
        case 'CustomerCreated':
          insertCustomer.run(e.data.customer_id, e.data.name, e.data.plan, e.data.speed_limit_kmh ?? null, e.data.created_at);
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
        case 'OAuthClientCreated':
        case 'OAuthClientDeleted':
        case 'OAuthTokenIssued':
        case 'GeofenceCreated':
        case 'GeofenceDeleted':
        case 'DriverCreated':
        case 'ImeiClaimed':
        case 'TerminalClaimed':
        case 'DeviceRegistered':
        case 'DeviceUpdated':
        case 'DeviceConnected':
        case 'DeviceDisconnected':
        case 'PositionRecorded':
        case 'StatusReported':
        case 'AlarmReported':
        case 'DeviceEventRaised':
        case 'UnknownDeviceSeen':
          return;
        default:
          assertNever(e);
      }
    };
  },
};
