/** Command queries (projections/commands), each scoped to the customer. */
import type Database from 'better-sqlite3';
import type { CommandSnapshot } from '../../core/events.js';
import { boundLimit } from '../../core/sqlite-limit.js';
import { stmt } from './statements.js';

export function commandById(db: Database.Database, customerId: string, commandId: string): CommandSnapshot | null {
  const body = stmt(db, 'SELECT body FROM commands WHERE command_id = ? AND customer_id = ?').pluck().get(commandId, customerId) as string | undefined;
  return body ? (JSON.parse(body) as CommandSnapshot) : null;
}

/** One page of a device's commands, newest first, strictly after `before` (the last row of the previous page). */
export function commandPage(
  db: Database.Database,
  customerId: string,
  deviceId: string,
  filter: { before: { t: number; id: string } | null; limit: number; statuses: string[] | null },
): CommandSnapshot[] {
  const where = ['customer_id = ?', 'device_id = ?'];
  const args: unknown[] = [customerId, deviceId];
  if (filter.before) {
    where.push('(created_at, command_id) < (?, ?)');
    args.push(filter.before.t, filter.before.id);
  }
  if (filter.statuses) {
    where.push(`status IN (${filter.statuses.map(() => '?').join(', ')})`);
    args.push(...filter.statuses);
  }
  const sql = `SELECT body FROM commands WHERE ${where.join(' AND ')} ORDER BY created_at DESC, command_id DESC LIMIT ${boundLimit()}`;
  return (stmt(db, sql).pluck().all(...args, filter.limit) as string[]).map((b) => JSON.parse(b) as CommandSnapshot);
}
