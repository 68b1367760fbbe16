/**
 * The tables nodes share beside the log (coordination/postgres.ts), created at open under an advisory
 * lock; each statement is idempotent, so every node may run them at every start.
 */
export const COORDINATION_SCHEMA_LOCK_KEY = 0x666c_6565_7402n; // "fleet" + 2
/** Held by each outcome write: writes commit in `seq` order, so a reader following `seq` never skips one. */
export const OUTCOMES_LOCK_KEY = 0x666c_6565_7403n; // "fleet" + 3

export const COORDINATION_SCHEMA: readonly string[] = [
  'CREATE TABLE IF NOT EXISTS fleet_rate_buckets (key text PRIMARY KEY, tokens float8 NOT NULL, at timestamptz NOT NULL)',
  // Refills for the time elapsed (by the server's clock, so nodes' clocks do not matter), then takes what it can.
  `CREATE OR REPLACE FUNCTION fleet_take_tokens_v1(p_key text, p_capacity float8, p_per_s float8, p_want int,
     OUT o_granted int, OUT o_tokens float8) LANGUAGE plpgsql VOLATILE AS $fn$
   DECLARE
     t float8;
     a timestamptz;
     n timestamptz := clock_timestamp();
   BEGIN
     INSERT INTO fleet_rate_buckets (key, tokens, at) VALUES (p_key, p_capacity, n) ON CONFLICT (key) DO NOTHING;
     SELECT b.tokens, b.at INTO t, a FROM fleet_rate_buckets b WHERE b.key = p_key FOR UPDATE;
     t := LEAST(p_capacity, t + GREATEST(0, extract(epoch FROM n - a)) * p_per_s);
     o_granted := LEAST(p_want, floor(t + 1e-9)::int);
     o_tokens := GREATEST(0, t - o_granted);
     UPDATE fleet_rate_buckets SET tokens = o_tokens, at = GREATEST(a, n) WHERE key = p_key;
   END $fn$`,
  `CREATE TABLE IF NOT EXISTS fleet_nodes (scope text NOT NULL, node text NOT NULL, expires_at timestamptz NOT NULL,
     PRIMARY KEY (scope, node))`,
  `CREATE TABLE IF NOT EXISTS fleet_leases (scope text NOT NULL, name text NOT NULL, holder text NOT NULL,
     expires_at timestamptz NOT NULL, PRIMARY KEY (scope, name))`,
  'CREATE SEQUENCE IF NOT EXISTS fleet_webhook_outcome_seq',
  `CREATE TABLE IF NOT EXISTS fleet_webhook_outcomes (
     delivery_id text PRIMARY KEY, customer_id text NOT NULL, webhook_id text NOT NULL, attempts int NOT NULL,
     state text NOT NULL, next_attempt_at bigint, last_attempt_at bigint NOT NULL, last_status int, last_error text,
     last_latency_ms int NOT NULL, last_response_start text,
     seq bigint NOT NULL DEFAULT nextval('fleet_webhook_outcome_seq'), written_at timestamptz NOT NULL DEFAULT now())`,
  'CREATE INDEX IF NOT EXISTS fleet_webhook_outcomes_seq ON fleet_webhook_outcomes (seq)',
];
