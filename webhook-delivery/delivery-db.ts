/**
 * The webhook delivery database: endpoints as delivery sees them, the queue
 * of deliveries (body bytes fixed when the event is projected), the log of
 * attempts and replay jobs. It is not a read model: it is never dropped and
 * rebuilt (that would send everything again), so it has no version to bump;
 * tables change by additive migrations only. Rows and the checkpoint are
 * committed together by the projection runner, so after a kill -9 every
 * delivery the checkpoint covers exists, and an attempt in flight at the kill
 * is sent again (at least once).
 */
import type Database from 'better-sqlite3';
import type { Plan } from '../core/events.js';
import { idTime } from '../core/ids.js';
import { openPrivateSqlite } from '../core/private-files.js';
import { boundLimit } from '../core/sqlite-limit.js';
import type { LaneRef, QueuedDelivery } from '../core/webhook-queue.js';
import type { Lane, LaneReads } from './lanes.js';
import { PLAN_DELIVERIES_PER_S } from './limiter.js';

export function openDeliveryDb(path: string): Database.Database {
  const db = openPrivateSqlite(path);
  // NORMAL (no fsync per commit, on the main thread) keeps every commit across a kill -9. A power
  // loss may drop the last commits: deliveries go with the checkpoint they were committed with, so
  // the projector queues them again; a lost outcome sends its attempt again. Both stay at least once.
  db.pragma('synchronous = NORMAL');
  db.exec(`
    CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, stream TEXT NOT NULL, event TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS wh_endpoints (
      webhook_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, url TEXT NOT NULL, events TEXT NOT NULL, device_ids TEXT,
      enabled INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0, secret TEXT NOT NULL,
      previous_secret TEXT, previous_valid_until INTEGER,
      -- first failure of the current run of failures (null after a success): "failing for days" is measured from it
      failing_since INTEGER);
    CREATE INDEX IF NOT EXISTS wh_endpoints_by_customer ON wh_endpoints (customer_id);
    -- per_s: an agreed webhook rate (CustomerWebhookLimitSet); null: the plan's.
    CREATE TABLE IF NOT EXISTS wh_customers (customer_id TEXT PRIMARY KEY, plan TEXT NOT NULL, per_s INTEGER);
    CREATE TABLE IF NOT EXISTS wh_devices (device_id TEXT PRIMARY KEY, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS wh_deliveries (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, delivery_id TEXT NOT NULL UNIQUE, webhook_id TEXT NOT NULL,
      customer_id TEXT NOT NULL, device_id TEXT NOT NULL, event_id TEXT NOT NULL, kind TEXT NOT NULL,
      occurred_at INTEGER NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL, replay_id TEXT,
      attempts INTEGER NOT NULL DEFAULT 0,
      state TEXT NOT NULL,              -- pending | delivered | failed
      next_attempt_at INTEGER,          -- null unless pending
      last_attempt_at INTEGER, last_status INTEGER, last_error TEXT, last_latency_ms INTEGER);
    CREATE INDEX IF NOT EXISTS wh_lane ON wh_deliveries (webhook_id, device_id, seq) WHERE next_attempt_at IS NOT NULL;
    CREATE INDEX IF NOT EXISTS wh_by_endpoint ON wh_deliveries (webhook_id, seq);
    -- A replay resumed after a crash queues each event once.
    CREATE UNIQUE INDEX IF NOT EXISTS wh_replayed ON wh_deliveries (replay_id, event_id) WHERE replay_id IS NOT NULL;
    CREATE INDEX IF NOT EXISTS wh_by_age ON wh_deliveries (created_at) WHERE next_attempt_at IS NULL;
    CREATE TABLE IF NOT EXISTS wh_attempts (
      delivery_id TEXT NOT NULL, attempt INTEGER NOT NULL, at INTEGER NOT NULL, status INTEGER, error TEXT,
      latency_ms INTEGER, response_start TEXT, PRIMARY KEY (delivery_id, attempt));
    -- Attempts before a delivery's latest one; the latest is on its row (last_*), so a first attempt that
    -- succeeds writes no row here. A redelivery first copies the latest here (the projector).
    CREATE TABLE IF NOT EXISTS wh_replays (
      replay_id TEXT PRIMARY KEY, webhook_id TEXT NOT NULL, customer_id TEXT NOT NULL, from_ms INTEGER NOT NULL,
      to_ms INTEGER NOT NULL, events TEXT, up_to TEXT NOT NULL, progress TEXT, done INTEGER NOT NULL DEFAULT 0);`);
  // Added after the first release: the latest attempt's response start, beside its other last_* columns.
  addColumn(db, 'wh_deliveries', 'last_response_start', 'TEXT');
  // A disable delivery decided (a 410) whose event is not in the log yet: {id, reason, detail, at} (endpoint-disable.ts).
  addColumn(db, 'wh_endpoints', 'disable_pending', 'TEXT');
  // A replay's state for GET .../replays/{id}: started (running), how many deliveries it queued, when it was asked and done.
  addColumn(db, 'wh_replays', 'requested_at', 'INTEGER');
  addColumn(db, 'wh_replays', 'started_at', 'INTEGER');
  addColumn(db, 'wh_replays', 'completed_at', 'INTEGER');
  addColumn(db, 'wh_replays', 'deliveries_queued', 'INTEGER NOT NULL DEFAULT 0');
  // Replays asked before requested_at was kept: their id holds the time.
  const undated = db.prepare('SELECT replay_id FROM wh_replays WHERE requested_at IS NULL').pluck().all() as string[];
  const date = db.prepare('UPDATE wh_replays SET requested_at = ? WHERE replay_id = ?');
  for (const id of undated) date.run(idTime(id), id);
  // GET .../deliveries?state=failed and ?event=: failed ones are few (the index holds only them); a kind's
  // rows are found without reading the endpoint's other kinds (kinds never change, so only inserts pay).
  db.exec(`CREATE INDEX IF NOT EXISTS wh_failed ON wh_deliveries (webhook_id, seq) WHERE state = 'failed';
           CREATE INDEX IF NOT EXISTS wh_by_kind ON wh_deliveries (webhook_id, kind, seq);`);
  // Gone: pending lanes are found by endpoint (wh_lane); every insert and outcome paid for its upkeep.
  db.exec('DROP INDEX IF EXISTS wh_due');
  return db;
}

function addColumn(db: Database.Database, table: string, column: string, declaration: string): void {
  const columns = (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
  if (!columns.includes(column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${declaration}`);
}

/** The queue's lanes as the scheduler reads them (lanes.ts). */
export function laneReads(db: Database.Database): LaneReads {
  const q = {
    // A lane's first pending rows, in order (index wh_lane), with their bodies.
    rowsAfter: db.prepare(
      `SELECT seq, delivery_id, webhook_id, customer_id, device_id, event_id, kind, attempts, next_attempt_at, body
       FROM wh_deliveries WHERE webhook_id = ? AND device_id = ? AND next_attempt_at IS NOT NULL AND seq > ?
       ORDER BY seq LIMIT ${boundLimit()}`,
    ),
    // Every lane with pending deliveries, of a customer (by its endpoints) and of all (index wh_lane both).
    lanesOf: db.prepare(
      `SELECT DISTINCT webhook_id, device_id FROM wh_deliveries
       WHERE webhook_id IN (SELECT webhook_id FROM wh_endpoints WHERE customer_id = ?) AND next_attempt_at IS NOT NULL`,
    ),
    pendingLanes: db.prepare('SELECT DISTINCT customer_id, webhook_id, device_id FROM wh_deliveries WHERE next_attempt_at IS NOT NULL'),
  };
  return {
    rowsAfter: (l, afterSeq, limit) => q.rowsAfter.all(l.webhook_id, l.device_id, afterSeq, limit) as QueuedDelivery[],
    lanesOf: (customerId) => q.lanesOf.all(customerId) as Lane[],
    pendingLanes: () => q.pendingLanes.all() as LaneRef[],
  };
}

/** The customer's deliveries a second: its agreed rate, else its plan's (Enterprise without an agreement: `enterprisePerS`). */
export function customerRates(db: Database.Database, enterprisePerS: number): (customerId: string) => number {
  const limit = db.prepare('SELECT plan, per_s FROM wh_customers WHERE customer_id = ?');
  return (customerId) => {
    const row = limit.get(customerId) as { plan: Plan; per_s: number | null } | undefined;
    if (row?.per_s) return row.per_s;
    const plan = row?.plan ?? 'free';
    return plan === 'enterprise' ? enterprisePerS : PLAN_DELIVERIES_PER_S[plan];
  };
}
