/** Event queries (GET /v1/events, /v1/events/{id}, /v1/feed); every one is scoped to the customer. */
import type Database from 'better-sqlite3';
import { whereBuilder } from './where.js';
import type { DeviceEventRow } from '../../projections/events/index.js';
import { stmt } from './statements.js';
import { boundLimit } from '../../core/sqlite-limit.js';

/** A row with the device's current name. */
export type EventRow = DeviceEventRow & { device_name: string | null };

export interface EventListFilter {
  deviceIds: string[] | null;
  driverIds: string[] | null;
  /** Exact kinds (prefixes already expanded). */
  kinds: string[] | null;
  severities: string[] | null;
  /** Half-open [from, to) on occurred_at. */
  from: number | null;
  to: number | null;
  order: 'asc' | 'desc';
  /** Keyset: strictly after this (occurred_at, event_id) in the chosen order. */
  after: { t: number; id: string } | null;
  limit: number;
}

const SELECT = `SELECT e.*, d.name AS device_name FROM device_events e
  LEFT JOIN devices d ON d.device_id = e.device_id AND d.customer_id = e.customer_id`;

export function eventPage(db: Database.Database, customerId: string, f: EventListFilter): EventRow[] {
  const { where, args, anyOf } = whereBuilder('e.customer_id = ?', customerId);
  anyOf('e.device_id', f.deviceIds);
  anyOf('e.driver_id', f.driverIds);
  anyOf('e.kind', f.kinds);
  anyOf('e.severity', f.severities);
  if (f.from !== null) {
    where.push('e.occurred_at >= ?');
    args.push(f.from);
  }
  if (f.to !== null) {
    where.push('e.occurred_at < ?');
    args.push(f.to);
  }
  const cmp = f.order === 'asc' ? '>' : '<';
  if (f.after) {
    where.push(`(e.occurred_at ${cmp} ? OR (e.occurred_at = ? AND e.event_id ${cmp} ?))`);
    args.push(f.after.t, f.after.t, f.after.id);
  }
  const dir = f.order === 'asc' ? 'ASC' : 'DESC';
  return stmt(db, `${SELECT} WHERE ${where.join(' AND ')} ORDER BY e.occurred_at ${dir}, e.event_id ${dir} LIMIT ${boundLimit()}`).all(
    ...args,
    f.limit,
  ) as EventRow[];
}

export function eventById(db: Database.Database, customerId: string, eventId: string): EventRow | null {
  return (stmt(db, `${SELECT} WHERE e.event_id = ? AND e.customer_id = ?`).get(eventId, customerId) as EventRow | undefined) ?? null;
}

/** The customer's events in log order, strictly after sequence `afterSeq`. */
export function feedPage(db: Database.Database, customerId: string, afterSeq: number, limit: number): EventRow[] {
  return stmt(db, `${SELECT} WHERE e.customer_id = ? AND e.seq > ? ORDER BY e.seq LIMIT ${boundLimit()}`).all(customerId, afterSeq, limit) as EventRow[];
}
