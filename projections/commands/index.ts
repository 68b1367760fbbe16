/**
 * The commands read model: every device command, its status and body as the
 * API returns it, listed per device newest first, and found by the expiry
 * sweep while queued (expiry.ts).
 */
import type Database from 'better-sqlite3';
import type { Projection } from '../projection.js';
import { commandAfter } from './evolve.js';

export interface CommandRow {
  command_id: string;
  customer_id: string;
  device_id: string;
  status: string;
  created_at: number;
  expires_at: number;
  /** The command (core/events/commands.ts CommandSnapshot) as JSON. */
  body: string;
}

export const commandsProjection: Projection = {
  name: 'commands',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS commands (
        command_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, device_id TEXT NOT NULL, status TEXT NOT NULL,
        created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, body TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS commands_by_device ON commands (customer_id, device_id, created_at DESC, command_id DESC);
      CREATE INDEX IF NOT EXISTS commands_queued ON commands (expires_at) WHERE status = 'queued';`);
  },
  prepare(db: Database.Database) {
    const put = db.prepare(
      `INSERT INTO commands (command_id, customer_id, device_id, status, created_at, expires_at, body) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (command_id) DO UPDATE SET status = excluded.status, body = excluded.body`,
    );
    return (e) => {
      const c = commandAfter(e);
      if (c) put.run(c.command_id, c.customer_id, c.device_id, c.status, c.created_at, c.expires_at, JSON.stringify(c));
    };
  },
};
