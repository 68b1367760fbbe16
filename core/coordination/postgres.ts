/** Coordination (port.ts) on the PostgreSQL that holds the log: its own small pool, its own tables. */
import pg from 'pg';
import type { BucketLimits } from '../token-bucket.js';
import type { BucketGrant, Coordination, LeaseRound, SharedOutcome } from './port.js';
import { COORDINATION_SCHEMA, COORDINATION_SCHEMA_LOCK_KEY, OUTCOMES_LOCK_KEY } from './postgres-schema.js';

/** Outcomes older than this are dropped from the shared table, as delivery drops its own (30 days). */
const OUTCOME_RETENTION = '30 days';
/** Nodes gone for this long are forgotten. */
const NODE_RETENTION = '1 hour';

const OUTCOME_COLUMNS = `delivery_id, customer_id, webhook_id, attempts, state, next_attempt_at, last_attempt_at, last_status,
  last_error, last_latency_ms, last_response_start`;

interface OutcomeRow extends Omit<SharedOutcome, 'next_attempt_at' | 'last_attempt_at'> {
  next_attempt_at: string | null;
  last_attempt_at: string;
}

export async function openPostgresCoordination(url: string): Promise<PostgresCoordination> {
  const c = new PostgresCoordination(url);
  try {
    await c.migrate();
  } catch (error) {
    await c.close();
    throw error;
  }
  return c;
}

export class PostgresCoordination implements Coordination {
  private readonly pool: pg.Pool;
  private lastPrune = 0;

  constructor(url: string) {
    this.pool = new pg.Pool({ connectionString: url, application_name: 'fleet-coordination', max: 4 });
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (client) => void client.on('error', () => undefined));
  }

  async migrate(): Promise<void> {
    await this.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [COORDINATION_SCHEMA_LOCK_KEY.toString()]);
      for (const statement of COORDINATION_SCHEMA) await client.query(statement);
    });
  }

  async takeTokens(key: string, limits: BucketLimits, want: number): Promise<BucketGrant> {
    const r = await this.pool.query<{ o_granted: number; o_tokens: number }>('SELECT * FROM fleet_take_tokens_v1($1, $2, $3, $4)', [
      key,
      limits.capacity,
      limits.perMinute / 60,
      want,
    ]);
    const row = r.rows[0]!;
    return { granted: row.o_granted, tokens: row.o_tokens };
  }

  async leaseRound(scope: string, node: string, keep: readonly string[], candidates: readonly string[], ttlMs: number): Promise<LeaseRound> {
    const ttl = `${Math.ceil(ttlMs)} milliseconds`;
    return this.transaction(async (client) => {
      await client.query(
        `INSERT INTO fleet_nodes (scope, node, expires_at) VALUES ($1, $2, now() + $3::interval)
         ON CONFLICT (scope, node) DO UPDATE SET expires_at = excluded.expires_at`,
        [scope, node, ttl],
      );
      const renewed = await client.query<{ name: string }>(
        `UPDATE fleet_leases SET expires_at = now() + $4::interval
         WHERE scope = $1 AND holder = $2 AND name = ANY($3::text[]) AND expires_at > now() RETURNING name`,
        [scope, node, keep, ttl],
      );
      const held = renewed.rows.map((r) => r.name);
      const live = await client.query<{ n: string }>('SELECT count(*) AS n FROM fleet_nodes WHERE scope = $1 AND expires_at > now()', [scope]);
      const liveNodes = Math.max(1, Number(live.rows[0]!.n));
      const want = Math.ceil(candidates.length / liveNodes) - held.length;
      if (want > 0) {
        const mine = new Set(held);
        // The conflict clause looks again under the row's lock: of two nodes claiming one lapsed lease, one gets it.
        const claimed = await client.query<{ name: string }>(
          `INSERT INTO fleet_leases AS l (scope, name, holder, expires_at)
             SELECT $1, c.name, $2, now() + $3::interval FROM unnest($4::text[]) AS c(name)
             WHERE NOT EXISTS (SELECT 1 FROM fleet_leases f WHERE f.scope = $1 AND f.name = c.name AND f.expires_at > now())
             LIMIT $5
           ON CONFLICT (scope, name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
             WHERE l.expires_at <= now()
           RETURNING name`,
          [scope, node, ttl, candidates.filter((c) => !mine.has(c)), want],
        );
        held.push(...claimed.rows.map((r) => r.name));
      }
      return { held, liveNodes };
    });
  }

  async releaseAll(scope: string, node: string): Promise<void> {
    await this.transaction(async (client) => {
      await client.query('DELETE FROM fleet_leases WHERE scope = $1 AND holder = $2', [scope, node]);
      await client.query('DELETE FROM fleet_nodes WHERE scope = $1 AND node = $2', [scope, node]);
    });
  }

  async putOutcomes(rows: readonly SharedOutcome[]): Promise<void> {
    if (rows.length === 0) return;
    const col = <K extends keyof SharedOutcome>(k: K) => rows.map((r) => r[k]);
    await this.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [OUTCOMES_LOCK_KEY.toString()]);
      await client.query(
        `INSERT INTO fleet_webhook_outcomes AS o (${OUTCOME_COLUMNS})
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::bigint[], $7::bigint[], $8::int[],
                                $9::text[], $10::int[], $11::text[])
         ON CONFLICT (delivery_id) DO UPDATE SET attempts = excluded.attempts, state = excluded.state,
           next_attempt_at = excluded.next_attempt_at, last_attempt_at = excluded.last_attempt_at, last_status = excluded.last_status,
           last_error = excluded.last_error, last_latency_ms = excluded.last_latency_ms, last_response_start = excluded.last_response_start,
           seq = nextval('fleet_webhook_outcome_seq'), written_at = now()
         WHERE o.attempts <= excluded.attempts`,
        [
          col('delivery_id'), col('customer_id'), col('webhook_id'), col('attempts'), col('state'), col('next_attempt_at'),
          col('last_attempt_at'), col('last_status'), col('last_error'), col('last_latency_ms'), col('last_response_start'),
        ],
      );
    });
    await this.pruneIfDue();
  }

  async outcomesOf(deliveryIds: readonly string[]): Promise<SharedOutcome[]> {
    if (deliveryIds.length === 0) return [];
    const r = await this.pool.query<OutcomeRow>(`SELECT ${OUTCOME_COLUMNS} FROM fleet_webhook_outcomes WHERE delivery_id = ANY($1::text[])`, [
      deliveryIds,
    ]);
    return r.rows.map(outcome);
  }

  async outcomesAfter(cursor: bigint, limit: number): Promise<Array<SharedOutcome & { seq: bigint; written_at: number }>> {
    const r = await this.pool.query<OutcomeRow & { seq: string; written_ms: string }>(
      `SELECT ${OUTCOME_COLUMNS}, seq, (extract(epoch FROM written_at) * 1000)::bigint AS written_ms
       FROM fleet_webhook_outcomes WHERE seq > $1 ORDER BY seq LIMIT $2`,
      [cursor.toString(), limit],
    );
    return r.rows.map((row) => ({ ...outcome(row), seq: BigInt(row.seq), written_at: Number(row.written_ms) }));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async pruneIfDue(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPrune < 3_600_000) return;
    this.lastPrune = now;
    await this.pool.query(`DELETE FROM fleet_webhook_outcomes WHERE written_at < now() - interval '${OUTCOME_RETENTION}'`);
    await this.pool.query(`DELETE FROM fleet_nodes WHERE expires_at < now() - interval '${NODE_RETENTION}'`);
  }

  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      // A connection whose state is unknown is not reused.
      client.release(true);
      throw error;
    }
  }
}

function outcome(r: OutcomeRow): SharedOutcome {
  return {
    delivery_id: r.delivery_id,
    customer_id: r.customer_id,
    webhook_id: r.webhook_id,
    attempts: r.attempts,
    state: r.state,
    next_attempt_at: r.next_attempt_at === null ? null : Number(r.next_attempt_at),
    last_attempt_at: Number(r.last_attempt_at),
    last_status: r.last_status,
    last_error: r.last_error,
    last_latency_ms: r.last_latency_ms,
    last_response_start: r.last_response_start,
  };
}
