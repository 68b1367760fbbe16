/**
 * The read side of the delivery database, for the API: an endpoint's deliveries and their
 * attempts, whether this node delivers an endpoint, and a test send (outside the queue).
 * It needs only a connection to the database, so it serves from the thread the API runs
 * on while delivery itself runs in another (thread.ts).
 */
import type Database from 'better-sqlite3';
import type { Clock } from '../core/clock.js';
import type { LogPosition } from '../core/event-store/port.js';
import type { SecretBox } from '../core/secret-box.js';
import { COMMAND_KINDS, type CommandKind } from '../core/alarms.js';
import { commandView } from '../core/command-view.js';
import { deviceEventId, newId } from '../core/ids.js';
import { createWebhookAgents, type AttemptResult } from './post-attempt.js';
import { sendSigned } from './send.js';
import { guardedLookup } from './url-safety.js';
import { boundLimit } from '../core/sqlite-limit.js';

export interface DeliveryRecord {
  delivery_id: string;
  webhook_id: string;
  event_id: string;
  kind: string;
  device_id: string;
  state: 'pending' | 'delivered' | 'failed' | 'cancelled';
  attempts: number;
  created_at: number;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  replay_id: string | null;
}

export interface AttemptRecord {
  attempt: number;
  at: number;
  status: number | null;
  error: string | null;
  latency_ms: number | null;
  response_start: string | null;
}


export type DeliveryWithAttempts = DeliveryRecord & { attempt_log: AttemptRecord[] };

/** A replay job as the API shows it (wh_replays). */
export interface ReplayRecord {
  replay_id: string;
  webhook_id: string;
  from: number;
  to: number;
  events: string[] | null;
  /** queued until delivery takes it up, running while it queues the events again, done once all are queued. */
  state: 'queued' | 'running' | 'done';
  deliveries_queued: number;
  requested_at: number;
  completed_at: number | null;
}

export type TestSendResult = AttemptResult & { event_id: string; delivery_id: string; body: string };

/** What the API asks of webhook delivery, wherever it runs (this thread or its own). */
export interface WebhookDeliveryAccess {
  /** Brings the delivery database up to the log's end. */
  catchUp(): Promise<void>;
  /** Resolves once the delivery database includes the event at `position` (after a command on an endpoint). */
  waitFor(position: LogPosition): Promise<void>;
  /** Reads of the delivery database from the caller's thread, and test sends. */
  readonly reads: DeliveryLog;
}

/** Which deliveries a page keeps: states and kinds (exact kinds, already expanded from patterns); absent or null is any. */
export interface DeliveryFilter {
  states?: readonly DeliveryRecord['state'][] | null;
  kinds?: readonly string[] | null;
}

export class DeliveryLog {
  private readonly q;
  /** Filtered pages' statements, by SQL text: a few hundred shapes at most (sets of states, by how many kinds). */
  private readonly filtered = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly box: SecretBox,
    private readonly allowPrivate: boolean,
    private readonly clock: Clock,
  ) {
    this.q = {
      page: db.prepare(
        `SELECT delivery_id, webhook_id, event_id, kind, device_id, state, attempts, created_at, next_attempt_at, last_attempt_at,
                last_status, last_error, last_latency_ms, replay_id
         FROM wh_deliveries WHERE webhook_id = ? AND customer_id = ? AND seq < ? ORDER BY seq DESC LIMIT ${boundLimit()}`,
      ),
      seqOf: db.prepare('SELECT seq FROM wh_deliveries WHERE delivery_id = ? AND webhook_id = ? AND customer_id = ?').pluck(),
      one: db.prepare(
        `SELECT delivery_id, webhook_id, event_id, kind, device_id, state, attempts, created_at, next_attempt_at, last_attempt_at,
                last_status, last_error, last_latency_ms, replay_id, last_response_start
         FROM wh_deliveries WHERE delivery_id = ? AND webhook_id = ? AND customer_id = ?`,
      ),
      attempts: db.prepare('SELECT attempt, at, status, error, latency_ms, response_start FROM wh_attempts WHERE delivery_id = ? ORDER BY attempt'),
      endpoint: db.prepare('SELECT * FROM wh_endpoints WHERE webhook_id = ? AND customer_id = ? AND deleted = 0'),
      replay: db.prepare(
        `SELECT replay_id, webhook_id, from_ms, to_ms, events, done, started_at, deliveries_queued, requested_at, completed_at
         FROM wh_replays WHERE replay_id = ? AND webhook_id = ? AND customer_id = ?`,
      ),
    };
  }

  /**
   * Newest first; `before` is the delivery id the previous page ended with.
   * `filter` keeps only some states and kinds (null: any).
   */
  deliveries(customerId: string, webhookId: string, before: string | null, limit: number, filter: DeliveryFilter = {}): DeliveryRecord[] {
    const beforeSeq = before === null ? Number.MAX_SAFE_INTEGER : ((this.q.seqOf.get(before, webhookId, customerId) as number | undefined) ?? 0);
    const states = filter.states ?? null;
    const kinds = filter.kinds ?? null;
    if (states === null && kinds === null) return this.q.page.all(webhookId, customerId, beforeSeq, limit) as DeliveryRecord[];
    if (states?.length === 0 || kinds?.length === 0) return [];
    const plan = filteredPage(states, kinds);
    let statement = this.filtered.get(plan.sql);
    if (!statement) this.filtered.set(plan.sql, (statement = this.db.prepare(plan.sql)));
    return statement.all({ webhookId, customerId, beforeSeq, limit, ...plan.params }) as DeliveryRecord[];
  }

  delivery(customerId: string, webhookId: string, deliveryId: string): DeliveryWithAttempts | null {
    const found = this.q.one.get(deliveryId, webhookId, customerId) as (DeliveryRecord & { last_response_start: string | null }) | undefined;
    if (!found) return null;
    const { last_response_start, ...row } = found;
    const log = this.q.attempts.all(deliveryId) as AttemptRecord[];
    // The latest attempt is on the delivery's row (a success has no row of its own in wh_attempts).
    if (row.attempts > 0 && row.last_attempt_at !== null && log.at(-1)?.attempt !== row.attempts) {
      log.push({ attempt: row.attempts, at: row.last_attempt_at, status: row.last_status, error: row.last_error, latency_ms: row.last_latency_ms, response_start: last_response_start });
    }
    return { ...row, attempt_log: log };
  }

  /** The customer's replay of the endpoint; null when there is none (another customer's included). */
  replay(customerId: string, webhookId: string, replayId: string): ReplayRecord | null {
    const r = this.q.replay.get(replayId, webhookId, customerId) as ReplayRow | undefined;
    if (!r) return null;
    return {
      replay_id: r.replay_id,
      webhook_id: r.webhook_id,
      from: r.from_ms,
      to: r.to_ms,
      events: r.events === null ? null : (JSON.parse(r.events) as string[]),
      state: r.done ? 'done' : r.started_at !== null ? 'running' : 'queued',
      deliveries_queued: r.deliveries_queued,
      requested_at: r.requested_at,
      completed_at: r.completed_at,
    };
  }

  /** Whether this node knows the endpoint (it exists, is not deleted, and is in this node's shard). */
  hasEndpoint(customerId: string, webhookId: string): boolean {
    return this.q.endpoint.get(webhookId, customerId) !== undefined;
  }

  /**
   * Sends a signed sample now, outside the queue and the plan limit (a
   * person waits on it), and answers what the receiver said.
   */
  async sendTest(customerId: string, webhookId: string, kind: string): Promise<TestSendResult | null> {
    const e = this.q.endpoint.get(webhookId, customerId) as { url: string; secret: string; previous_secret: string | null; previous_valid_until: number | null } | undefined;
    if (!e) return null;
    const now = this.clock.now();
    const deliveryId = newId('dlv', now);
    const eventId = deviceEventId(now, `test:${deliveryId}`);
    const body = JSON.stringify(samplePayload(kind, eventId, now));
    const agents = createWebhookAgents();
    try {
      const result = await sendSigned(
        {
          url: e.url,
          body: Buffer.from(body),
          kind,
          eventId,
          deliveryId,
          attempt: 1,
          secret: this.box.open(e.secret),
          previousSecret: e.previous_secret && e.previous_valid_until !== null && now < e.previous_valid_until ? this.box.open(e.previous_secret) : null,
          nowMs: now,
        },
        { lookup: guardedLookup(this.allowPrivate), agents },
      );
      return { ...result, event_id: eventId, delivery_id: deliveryId, body };
    } finally {
      agents.destroy();
    }
  }
}

const COLUMNS = `delivery_id, webhook_id, event_id, kind, device_id, state, attempts, created_at, next_attempt_at, last_attempt_at,
                last_status, last_error, last_latency_ms, replay_id`;
const STATES: ReadonlySet<string> = new Set(['pending', 'delivered', 'failed', 'cancelled']);

/**
 * The SQL of a filtered page. An index gives rows in seq order only for one
 * value of its column, so a page over several values is the merge of one
 * branch per value, each reading at most `limit` rows in index order:
 * - only failed ones: the partial index wh_failed, which holds just those;
 * - else with kinds: one branch per kind on wh_by_kind (no other state is
 *   rare enough for an index to pay for its upkeep), states checked per row;
 * - else (states only): one branch per state on wh_by_endpoint.
 * States are literals (a fixed set, checked here) so SQLite can use the partial index.
 */
function filteredPage(states: readonly string[] | null, kinds: readonly string[] | null): { sql: string; params: Record<string, string> } {
  for (const s of states ?? []) if (!STATES.has(s)) throw new Error(`unknown delivery state ${s}`);
  const stateIn = states === null ? '' : ` AND state IN (${states.map((s) => `'${s}'`).join(', ')})`;
  const base = `SELECT seq, ${COLUMNS} FROM wh_deliveries WHERE webhook_id = @webhookId AND customer_id = @customerId AND seq < @beforeSeq`;
  const page = `ORDER BY seq DESC LIMIT ${boundLimit('@limit')}`;
  const params: Record<string, string> = {};
  let branches: string[];
  if (kinds !== null && !(states?.length === 1 && states[0] === 'failed')) {
    branches = kinds.map((k, i) => {
      params[`kind${i}`] = k;
      return `${base} AND kind = @kind${i}${stateIn}`;
    });
  } else {
    if (kinds !== null) params.kinds = JSON.stringify(kinds);
    const kindIn = kinds === null ? '' : ' AND kind IN (SELECT value FROM json_each(@kinds))';
    branches = states!.map((s) => `${base} AND state = '${s}'${kindIn}`);
  }
  const merged = branches.length === 1 ? branches[0] : branches.map((b) => `SELECT * FROM (${b} ${page})`).join(' UNION ALL ');
  return { sql: `SELECT ${COLUMNS} FROM (${merged} ${page})`, params };
}

interface ReplayRow {
  replay_id: string;
  webhook_id: string;
  from_ms: number;
  to_ms: number;
  events: string | null;
  done: number;
  started_at: number | null;
  deliveries_queued: number;
  requested_at: number;
  completed_at: number | null;
}

/** A test payload: the shape of `kind` with made-up values, marked as a test. */
function samplePayload(kind: string, eventId: string, now: number) {
  const at = new Date(now).toISOString();
  const common = {
    event: kind,
    event_id: eventId,
    occurred_at: at,
    sequence: 0,
    device_id: 'dev_test',
    device_name: 'Test device',
    driver_id: null,
    severity: 'info',
    position: { lat: 56.9496, lng: 24.1052, speed_kmh: 42, timestamp: at },
    test: true,
  };
  return (COMMAND_KINDS as readonly string[]).includes(kind) ? { ...common, position: null, command: sampleCommand(kind as CommandKind, now) } : common;
}

/** A command as a payload of `kind` shows it (`command.failed`: a failed one). */
function sampleCommand(kind: CommandKind, now: number) {
  const status = kind.slice('command.'.length) as 'sent' | 'succeeded' | 'failed' | 'expired';
  const sent = status === 'expired' ? null : now - 2000;
  return commandView({
    command_id: 'cmd_test', device_id: 'dev_test', customer_id: 'cus_test', type: 'engine_resume', params: {}, status, waiting_for: null,
    created_at: now - 5000, sent_at: sent, acknowledged_at: null, completed_at: status === 'sent' ? null : now, expires_at: now + 295_000,
    response: status === 'succeeded' ? { text: 'DOUT1:0', result_code: null, raw_hex: '444f5554313a30' } : null,
    error: status === 'failed' ? 'no_reply' : status === 'expired' ? 'expired' : null, send_attempts: sent === null ? 0 : 1,
  });
}
