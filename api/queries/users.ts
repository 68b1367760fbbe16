/**
 * Panel users and sessions (tables of projections/users). The session lookup
 * establishes the tenant, so it is by token hash alone; it carries what a
 * request needs: the user, the customer's name, plan and agreed rate limit.
 */
import type Database from 'better-sqlite3';
import type { Plan } from '../../core/events.js';
import type { RateLimit } from '../context.js';
import { stmt } from './statements.js';

export interface SessionRecord {
  session_id: string;
  token_sha256: string;
  started_at: number;
  expires_at: number;
  ended_at: number | null;
  user: { user_id: string; email: string; name: string; customer_id: string };
  customer: { customer_id: string; name: string; plan: Plan };
  /** The customer's agreed rate limit; null: its plan's. */
  rate_limit: RateLimit | null;
}

interface SessionRow {
  session_id: string;
  token_sha256: string;
  started_at: number;
  expires_at: number;
  ended_at: number | null;
  user_id: string;
  email: string;
  user_name: string;
  customer_id: string;
  customer_name: string;
  plan: Plan;
  rate_per_minute: number | null;
  rate_burst: number | null;
}

export function sessionByHash(db: Database.Database, hash: string): SessionRecord | null {
  const row = stmt(
    db,
    `SELECT s.session_id, s.token_sha256, s.started_at, s.expires_at, s.ended_at, u.user_id, u.email, u.name AS user_name,
            c.customer_id, c.name AS customer_name, c.plan, r.per_minute AS rate_per_minute, r.burst AS rate_burst
     FROM sessions s JOIN users u ON u.user_id = s.user_id
     JOIN customers c ON c.customer_id = s.customer_id
     LEFT JOIN customer_rate_limits r ON r.customer_id = s.customer_id
     WHERE s.token_sha256 = ?`,
  ).get(hash) as SessionRow | undefined;
  if (!row) return null;
  return {
    session_id: row.session_id,
    token_sha256: row.token_sha256,
    started_at: row.started_at,
    expires_at: row.expires_at,
    ended_at: row.ended_at,
    user: { user_id: row.user_id, email: row.email, name: row.user_name, customer_id: row.customer_id },
    customer: { customer_id: row.customer_id, name: row.customer_name, plan: row.plan },
    rate_limit: row.rate_per_minute === null || row.rate_burst === null ? null : { perMinute: row.rate_per_minute, burst: row.rate_burst },
  };
}

export interface UserRow {
  user_id: string;
  customer_id: string;
  email: string;
  name: string;
  created_at: number;
}

/** A customer's users in id order. */
export function usersOfCustomer(db: Database.Database, customerId: string): UserRow[] {
  return stmt(db, 'SELECT * FROM users WHERE customer_id = ? ORDER BY user_id').all(customerId) as UserRow[];
}
