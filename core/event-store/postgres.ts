/**
 * The event store on PostgreSQL (`postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=...`), on the
 * `pg` client: the port with the SQLite adapter's semantics (an event id is written once in the
 * whole log, the expected revision is checked before duplicates are dropped, the position is both
 * parts of a LogPosition). It passes test/core/event-store.contract.ts.
 *
 * Appends made in one turn of the event loop share one transaction (group commit), and each
 * caller's promise resolves only after COMMIT answered: a commit whose outcome is unknown rejects.
 */
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
  TypeFilter,
} from './port.js';
import { WrongExpectedRevisionError, typeFilterOf } from './port.js';
import { POSTGRES_SCHEMA, POSTGRES_SCHEMA_LAST } from './postgres-schema.js';
import { StoreWriteError } from './write-health.js';

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

/** An insert as fleet_append_v1 makes it, for tests that hold a transaction open; rows go in the arrays' order. */
export const INSERT_EVENTS_SQL = `INSERT INTO fleet_events (event_id, stream, revision, type, data, metadata, created)
  SELECT e, s, r, t, d, m, c FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::bigint[])
    WITH ORDINALITY AS u(e, s, r, t, d, m, c, n) ORDER BY n
  RETURNING position, event_id`;

/** A group commit: the function the schema creates (postgres-schema.ts), one row of per-append arrays. */
const APPEND_SQL = 'SELECT o_actual, o_next, o_position FROM fleet_append_v1($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)';
const EXPECTED_KIND = { any: 0, no_stream: 1, stream_exists: 2 } as const;

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
      const present = await client.query<{ ok: boolean }>(`SELECT to_regprocedure($1) IS NOT NULL AS ok`, [POSTGRES_SCHEMA_LAST]);
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
    return (await this.readAfter(afterPosition(options.after), options.maxCount ?? 1000, typeFilterOf(options))).events;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): Subscription {
    const fromEnd = options.after === 'end';
    const state: FollowState = { cursor: fromEnd ? 0n : afterPosition(options.after as LogPosition | undefined), stopped: false, wake: null };
    const events = this.follow(state, typeFilterOf(options), fromEnd);
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
  private async *follow(state: FollowState, filter: TypeFilter, fromEnd: boolean): AsyncGenerator<RecordedEvent> {
    if (fromEnd) state.cursor = BigInt((await this.pool.query<{ head: string }>(HEAD_SQL)).rows[0]!.head);
    while (!state.stopped && !this.closed) {
      const page = await this.readAfter(state.cursor, FOLLOW_BATCH, filter);
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

  /** A small committed write, for write health to learn that the database takes writes again. */
  async probeWrite(): Promise<void> {
    try {
      await this.pool.query(PROBE_SQL);
    } catch (error) {
      throw writeError(error);
    }
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

  /**
   * The whole group in one statement outside an explicit transaction: fleet_append_v1 takes the
   * append lock, checks revisions and duplicates, inserts and notifies, and the server answers only
   * once the statement's implicit transaction committed. One round trip a group, not seven.
   */
  private async commit(batch: PendingAppend[]): Promise<void> {
    const streams: string[] = [];
    const streamIndex = new Map<string, number>();
    const firstOf = new Map<string, number>();
    const args = { streamOf: [] as number[], kind: [] as number[], revision: [] as string[], count: [] as number[], id: [] as string[], type: [] as string[], data: [] as string[], meta: [] as string[], first: [] as number[] };
    for (const a of batch) {
      let k = streamIndex.get(a.stream);
      if (k === undefined) {
        streams.push(a.stream);
        k = streams.length;
        streamIndex.set(a.stream, k);
      }
      args.streamOf.push(k);
      args.kind.push(typeof a.expected === 'bigint' ? 3 : EXPECTED_KIND[a.expected]);
      args.revision.push(typeof a.expected === 'bigint' ? a.expected.toString() : '0');
      args.count.push(a.events.length);
      for (const e of a.events) {
        args.id.push(e.id);
        args.type.push(e.type);
        args.data.push(e.data);
        args.meta.push(e.metadata);
        // SQL arrays count from 1.
        let first = firstOf.get(e.id);
        if (first === undefined) firstOf.set(e.id, (first = args.id.length));
        args.first.push(first);
      }
    }
    let out: { o_actual: (string | null)[]; o_next: (string | null)[]; o_position: (string | null)[] };
    try {
      const result = await this.pool.query<typeof out>({
        name: 'fleet_append_v1',
        text: APPEND_SQL,
        values: [APPEND_LOCK_KEY.toString(), NOTIFY_CHANNEL, String(this.clock.now()), streams, args.streamOf, args.kind, args.revision, args.count, args.id, args.type, args.data, args.meta, args.first],
      });
      out = result.rows[0]!;
    } catch (error) {
      // The commit failed or its outcome is unknown: every caller of the group is rejected.
      const failure = writeError(error);
      for (const a of batch) a.reject(failure);
      return;
    }
    this.transactionsCommitted += 1;
    for (const [i, a] of batch.entries()) {
      const actual = out.o_actual[i];
      if (actual !== null && actual !== undefined) {
        const current = BigInt(actual);
        a.reject(new WrongExpectedRevisionError(a.stream, a.expected, current === -1n ? 'no_stream' : current));
      } else a.resolve({ nextExpectedRevision: BigInt(out.o_next[i]!), position: pos(BigInt(out.o_position[i]!)) });
    }
    this.wakeFollowers();
  }

  /**
   * Up to `maxCount` events after `after`, and the position read through: past events the filter
   * left out too (the log's head when fewer came back), so a follower does not read them again.
   */
  private async readAfter(after: bigint, maxCount: number, filter: TypeFilter): Promise<{ events: RecordedEvent[]; through: bigint }> {
    const limit = Math.max(0, Math.min(maxCount, 2 ** 31 - 1));
    // One statement, one snapshot: the head read is the one the events were read in.
    const result = await this.pool.query<Partial<EventRow> & { head: string | null }>(
      `SELECT h.head, p.* FROM (SELECT max(position) AS head FROM fleet_events) h
       LEFT JOIN LATERAL (
         SELECT ${COLUMNS} FROM fleet_events WHERE position > $1 AND (type = ANY($2::text[])) = $4 ORDER BY position LIMIT $3
       ) p ON true
       ORDER BY p.position`,
      // No filter: no type is named, and none is kept only.
      [after.toString(), filter ? [...filter.types] : [], limit, filter?.only ?? false],
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

/** The log's last position (0 when empty), where a subscription from its end starts. */
const HEAD_SQL = 'SELECT coalesce(max(position), 0)::text AS head FROM fleet_events';

/** Kept apart from the log: a probe must not add an event, nor wait for the append lock. */
const PROBE_SQL = `CREATE TABLE IF NOT EXISTS fleet_write_probe (id integer PRIMARY KEY, at timestamptz NOT NULL);
INSERT INTO fleet_write_probe (id, at) VALUES (1, now()) ON CONFLICT (id) DO UPDATE SET at = excluded.at`;

/** A failed write as write health reads it: PostgreSQL's SQLSTATE (53100 disk full, 25006 read-only, 57P01 shut down) or the socket's code. */
function writeError(error: unknown): StoreWriteError {
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' && e.code !== '' ? `PG_${e.code}` : 'PG_FAILED';
  return new StoreWriteError(code, `PostgreSQL write failed: ${String(e.message ?? error)}`, { cause: error });
}
