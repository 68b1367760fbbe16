/**
 * The event store on PostgreSQL (`postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=...`), on the
 * `pg` client: the port with the SQLite adapter's semantics (an event id is written once in the
 * whole log, the expected revision is checked before duplicates are dropped, the position is both
 * parts of a LogPosition). It passes test/core/event-store.contract.ts.
 *
 * Appends made in one turn of the event loop share one transaction (group commit), and each
 * caller's promise resolves only after COMMIT answered: a commit whose outcome is unknown rejects.
 */
/* eslint-disable no-restricted-syntax -- its only rule here is SQLite's bound-LIMIT one; PostgreSQL binds a LIMIT without re-planning */
import pg from 'pg';
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { DomainEvent } from '../events.js';
import type {
  AppendResult,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  LogPosition,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeToAllOptions,
  Subscription,
} from './port.js';
import { WrongExpectedRevisionError } from './port.js';
import { POSTGRES_SCHEMA, POSTGRES_SCHEMA_LAST } from './postgres-schema.js';

/**
 * Held by every append transaction before it takes a position: appenders of all nodes commit one
 * after another, so positions become visible in order and a reader never passes a position whose
 * transaction commits later. The cost is that appends of all nodes are serialized, one group
 * commit at a time; the xid8/snapshot-xmin rule would let them overlap, at the price of readers
 * ordering by transaction and a checkpoint of two numbers.
 */
export const APPEND_LOCK_KEY = 0x666c_6565_7401n; // "fleet" + 1
/** Held while the schema is created or migrated, so nodes starting together do not race. */
const SCHEMA_LOCK_KEY = 0x666c_6565_7402n;
/** One notification per committed group; followers also poll, so a lost one only delays them. */
export const NOTIFY_CHANNEL = 'fleet_events';
const POLL_MS = 500;
const FOLLOW_BATCH = 1000;

/** The statement every append transaction writes its events with; rows go in the arrays' order. */
export const INSERT_EVENTS_SQL = `INSERT INTO fleet_events (event_id, stream, revision, type, data, metadata, created)
  SELECT e, s, r, t, d, m, c FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::bigint[])
    WITH ORDINALITY AS u(e, s, r, t, d, m, c, n) ORDER BY n
  RETURNING position, event_id`;

interface Encoded {
  id: string;
  type: string;
  data: string;
  metadata: string;
}

interface PendingAppend {
  stream: string;
  events: Encoded[];
  expected: ExpectedRevision;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

interface EventRow {
  position: string;
  event_id: string;
  stream: string;
  revision: string;
  type: string;
  data: string;
  metadata: string;
  created: string;
}

const COLUMNS = 'position, event_id, stream, revision, type, data, metadata, created';

export async function openPostgresEventStore(url: string, options: { clock?: Clock } = {}): Promise<PostgresEventStore> {
  const store = new PostgresEventStore(url, options);
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

export class PostgresEventStore implements EventStore {
  private readonly pool: pg.Pool;
  private readonly clock: Clock;
  private readonly config: pg.ClientConfig;
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  /** The transaction in flight, if any: one at a time, the next takes what queued meanwhile. */
  private writing: Promise<void> | null = null;
  private readonly waiting = new Set<() => void>();
  private listener: pg.Client | null = null;
  private listenerRetry: NodeJS.Timeout | null = null;
  private closed = false;
  /** Append transactions committed by this store (group commit puts many appends in one). */
  transactionsCommitted = 0;

  constructor(url: string, options: { clock?: Clock } = {}) {
    this.clock = options.clock ?? systemClock;
    this.config = { connectionString: url, application_name: 'fleet' };
    this.pool = new pg.Pool({ ...this.config, max: 8 });
    // An idle connection the server dropped: the pool discards it and opens another when asked.
    this.pool.on('error', () => undefined);
    // A connection lost while checked out: its query rejects, and the pool does not reuse it.
    this.pool.on('connect', (client) => void client.on('error', () => undefined));
  }

  /** Creates or migrates the schema, then listens for other nodes' commits. */
  async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK_KEY.toString()]);
      // DDL on a table in use would wait for every append in flight: run it only when missing.
      const present = await client.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [POSTGRES_SCHEMA_LAST]);
      if (!present.rows[0]?.ok) for (const statement of POSTGRES_SCHEMA) await client.query(statement);
      await client.query('COMMIT');
      client.release();
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      throw error;
    }
    await this.listen();
  }

  appendToStream(stream: string, events: EventToAppend[], options: { expectedRevision?: ExpectedRevision } = {}): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('event store is closed'));
    let encoded: Encoded[];
    try {
      // Encoded first: an append whose data is not JSON fails whole, writing nothing.
      encoded = events.map(encode);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ stream, events: encoded, expected: options.expectedRevision ?? 'any', resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        // At the end of this turn, so every append made in it joins the same transaction.
        setImmediate(() => void this.flush());
      }
    });
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const max = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    if (max <= 0) return [];
    const direction = options.direction ?? 'forwards';
    const from = options.fromRevision ?? (direction === 'forwards' ? 'start' : 'end');
    const limit = Math.min(max, 2 ** 31 - 1);
    let rows: EventRow[];
    if (direction === 'forwards') {
      if (from === 'end') return [];
      const first = from === 'start' ? 0n : from;
      rows = (
        await this.pool.query<EventRow>(
          `SELECT ${COLUMNS} FROM fleet_events WHERE stream = $1 AND revision >= $2 ORDER BY revision LIMIT $3`,
          [stream, first.toString(), limit],
        )
      ).rows;
    } else {
      const first = from === 'end' ? 2n ** 63n - 1n : from === 'start' ? 0n : from;
      rows = (
        await this.pool.query<EventRow>(
          `SELECT ${COLUMNS} FROM fleet_events WHERE stream = $1 AND revision <= $2 ORDER BY revision DESC LIMIT $3`,
          [stream, first.toString(), limit],
        )
      ).rows;
    }
    return rows.map(recorded);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return (await this.readAfter(afterPosition(options.after), options.maxCount ?? 1000, options.skipTypes)).events;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): Subscription {
    const state: FollowState = { cursor: afterPosition(options.after), stopped: false, wake: null };
    const events = this.follow(state, options.skipTypes);
    return {
      [Symbol.asyncIterator]: () => events,
      close: () => {
        state.stopped = true;
        state.wake?.();
        return Promise.resolve();
      },
    };
  }

  /** Reads on from the cursor; with nothing new, waits for a commit (here or notified) or the next poll. */
  private async *follow(state: FollowState, skipTypes: readonly string[] | undefined): AsyncGenerator<RecordedEvent> {
    while (!state.stopped && !this.closed) {
      const page = await this.readAfter(state.cursor, FOLLOW_BATCH, skipTypes);
      state.cursor = page.through;
      for (const e of page.events) {
        if (state.stopped) return;
        yield e;
      }
      if (page.events.length === 0) await this.nextCommit(state);
    }
  }

  private nextCommit(state: FollowState): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, POLL_MS);
      const waiting = this.waiting;
      function done() {
        clearTimeout(timer);
        waiting.delete(done);
        state.wake = null;
        resolve();
      }
      state.wake = done;
      waiting.add(done);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wakeFollowers();
    if (this.listenerRetry) clearTimeout(this.listenerRetry);
    // Appends already queued are committed (or rejected) before the pool ends.
    while (this.writing || this.queue.length > 0) await (this.writing ?? this.flush());
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => undefined);
    await this.pool.end();
  }

  /** Commits everything queued in one transaction; what queues meanwhile goes in the next. */
  private flush(): Promise<void> {
    this.flushScheduled = false;
    if (this.writing) return this.writing;
    const batch = this.queue;
    if (batch.length === 0) return Promise.resolve();
    this.queue = [];
    this.writing = this.commit(batch).finally(() => {
      this.writing = null;
      if (this.queue.length > 0) void this.flush();
    });
    return this.writing;
  }

  private async commit(batch: PendingAppend[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      for (const a of batch) a.reject(error);
      return;
    }
    try {
      const outcomes = await this.writeBatch(client, batch);
      await client.query('COMMIT');
      client.release();
      this.transactionsCommitted += 1;
      for (const [i, a] of batch.entries()) {
        const outcome = outcomes[i]!;
        if (outcome instanceof Error) a.reject(outcome);
        else a.resolve(outcome);
      }
      this.wakeFollowers();
    } catch (error) {
      // The commit's outcome is unknown or it failed: every caller of the batch is rejected.
      client.release(error instanceof Error ? error : true);
      for (const a of batch) a.reject(error);
    }
  }

  /**
   * Writes the batch inside an open transaction holding the append lock. Revisions and duplicates
   * are checked here, before writing, so an append that fails its check is refused alone.
   */
  private async writeBatch(client: pg.PoolClient, batch: PendingAppend[]): Promise<(AppendResult | Error)[]> {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK_KEY.toString()]);
    const streams = [...new Set(batch.map((a) => a.stream))];
    const ids = [...new Set(batch.flatMap((a) => a.events.map((e) => e.id)))];
    /** Each stream's last event: its revision, and its position, or its row in this batch (-1: stored before). */
    const heads = new Map<string, { revision: bigint; position: bigint; row: number }>();
    const headRows = await client.query<{ stream: string; revision: string; position: string }>(
      `SELECT DISTINCT ON (stream) stream, revision, position FROM fleet_events WHERE stream = ANY($1::text[]) ORDER BY stream, revision DESC`,
      [streams],
    );
    for (const r of headRows.rows) heads.set(r.stream, { revision: BigInt(r.revision), position: BigInt(r.position), row: -1 });
    const stored = new Set(
      ids.length === 0 ? [] : (await client.query<{ event_id: string }>('SELECT event_id FROM fleet_events WHERE event_id = ANY($1::text[])', [ids])).rows.map((r) => r.event_id),
    );

    const rows = { e: [] as string[], s: [] as string[], r: [] as string[], t: [] as string[], d: [] as string[], m: [] as string[], c: [] as string[] };
    const created = String(this.clock.now());
    const outcomes: (AppendResult | Error)[] = [];
    /** Per append: the row (in `rows`) whose position it answers with, -1 when none of this batch. */
    const answerRow: number[] = [];
    for (const a of batch) {
      const head = heads.get(a.stream);
      const current = head ? head.revision : -1n;
      const expected = a.expected;
      const holds =
        expected === 'any' ||
        (expected === 'no_stream' && current === -1n) ||
        (expected === 'stream_exists' && current !== -1n) ||
        expected === current;
      if (!holds) {
        outcomes.push(new WrongExpectedRevisionError(a.stream, expected, current === -1n ? 'no_stream' : current));
        answerRow.push(-1);
        continue;
      }
      let revision = current;
      let last = head ? head.row : -1;
      for (const e of a.events) {
        // Idempotence: an id already in the log (or earlier in this transaction) is acknowledged, not written again.
        if (stored.has(e.id)) continue;
        stored.add(e.id);
        revision += 1n;
        last = rows.e.length;
        rows.e.push(e.id);
        rows.s.push(a.stream);
        rows.r.push(revision.toString());
        rows.t.push(e.type);
        rows.d.push(e.data);
        rows.m.push(e.metadata);
        rows.c.push(created);
      }
      // Every id a duplicate: the stream's last event, as SQLite answers.
      outcomes.push({ nextExpectedRevision: revision, position: pos(head ? head.position : -1n) });
      answerRow.push(last);
      if (revision !== current) heads.set(a.stream, { revision, position: -1n, row: last });
    }
    if (rows.e.length === 0) return outcomes;

    const inserted = await client.query<{ position: string; event_id: string }>(INSERT_EVENTS_SQL, [rows.e, rows.s, rows.r, rows.t, rows.d, rows.m, rows.c]);
    const positionOf = new Map(inserted.rows.map((r) => [r.event_id, BigInt(r.position)]));
    for (const [i, outcome] of outcomes.entries()) {
      const row = answerRow[i]!;
      if (!(outcome instanceof Error) && row >= 0) outcome.position = pos(positionOf.get(rows.e[row]!)!);
    }
    // Delivered at COMMIT, once for the whole group.
    await client.query('SELECT pg_notify($1, $2)', [NOTIFY_CHANNEL, '']);
    return outcomes;
  }

  /**
   * Up to `maxCount` events after `after`, and the position read through: past skipped events
   * too (the log's head when fewer came back), so a follower does not read them again.
   */
  private async readAfter(after: bigint, maxCount: number, skipTypes?: readonly string[]): Promise<{ events: RecordedEvent[]; through: bigint }> {
    const skip = skipTypes && skipTypes.length > 0 ? [...skipTypes] : [];
    const limit = Math.max(0, Math.min(maxCount, 2 ** 31 - 1));
    // One statement, one snapshot: the head read is the one the events were read in.
    const result = await this.pool.query<Partial<EventRow> & { head: string | null }>(
      `SELECT h.head, p.* FROM (SELECT max(position) AS head FROM fleet_events) h
       LEFT JOIN LATERAL (
         SELECT ${COLUMNS} FROM fleet_events WHERE position > $1 AND NOT (type = ANY($2::text[])) ORDER BY position LIMIT $3
       ) p ON true
       ORDER BY p.position`,
      [after.toString(), skip, limit],
    );
    const rows = result.rows.filter((r): r is EventRow & { head: string } => r.position !== null && r.position !== undefined);
    const events = rows.map(recorded);
    let through = events.at(-1)?.position.commit ?? after;
    const head = result.rows[0]?.head;
    if (events.length < limit && head !== null && head !== undefined && BigInt(head) > through) through = BigInt(head);
    return { events, through };
  }

  /** A connection that LISTENs for other nodes' commits; lost, it is opened again a second later. */
  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client(this.config);
    const retry = () => {
      if (this.listener === client) this.listener = null;
      client.end().catch(() => undefined);
      if (this.closed || this.listenerRetry) return;
      this.listenerRetry = setTimeout(() => {
        this.listenerRetry = null;
        void this.listen().catch(retry);
      }, 1000);
      this.listenerRetry.unref();
    };
    client.on('error', retry);
    client.on('notification', () => this.wakeFollowers());
    try {
      await client.connect();
      await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
    } catch {
      retry();
      return;
    }
    if (this.closed) await client.end().catch(() => undefined);
    else this.listener = client;
  }

  private wakeFollowers(): void {
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const wake of waiting) wake();
  }
}

interface FollowState {
  cursor: bigint;
  stopped: boolean;
  wake: (() => void) | null;
}

/** An event as stored; throws for one without an id or JSON data, before its append is queued. */
function encode(e: EventToAppend): Encoded {
  if (typeof e.id !== 'string') throw new Error(`event of type ${e.type} has no id`);
  const data = JSON.stringify(e.data) as string | undefined;
  if (data === undefined) throw new Error(`event ${e.id} has no JSON data`);
  const metadata = e.metadata === undefined ? '{}' : JSON.stringify(e.metadata);
  return { id: e.id, type: e.type, data, metadata };
}

function pos(p: bigint): LogPosition {
  return { commit: p, prepare: p };
}

function afterPosition(p: LogPosition | undefined): bigint {
  return p ? (p.commit < 0n ? 0n : p.commit) : 0n;
}

function recorded(r: EventRow): RecordedEvent {
  return {
    id: r.event_id,
    stream: r.stream,
    revision: BigInt(r.revision),
    position: pos(BigInt(r.position)),
    type: r.type,
    data: JSON.parse(r.data) as unknown,
    metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    created: Number(r.created),
  } as RecordedEvent<DomainEvent>;
}
