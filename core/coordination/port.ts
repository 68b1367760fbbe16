/**
 * What nodes of one platform share beyond the log, when several run against one PostgreSQL: plan
 * token buckets (the API's rate limits hold across API nodes), leases (webhook delivery as competing
 * consumers: one node sends a customer's deliveries at a time) and the outcomes of deliveries (a node
 * taking a customer over goes on where the last one stopped). On one machine there is nothing to
 * share: the callers keep this in memory and no Coordination is opened.
 */
import type { BucketLimits } from '../token-bucket.js';

export interface BucketGrant {
  /** Whole tokens taken, 0..want. */
  granted: number;
  /** Tokens left in the shared bucket after this take (fractional). */
  tokens: number;
}

/** One node's leases in a scope after a round. */
export interface LeaseRound {
  /** Names this node holds; valid until the round's start + ttl (by this node's monotonic clock). */
  held: string[];
  /** Nodes of the scope alive now, this one included. */
  liveNodes: number;
}

/** A delivery's state after an attempt, as the sending node committed it (webhooks.sqlite's wh_deliveries). */
export interface SharedOutcome {
  delivery_id: string;
  customer_id: string;
  webhook_id: string;
  attempts: number;
  state: 'pending' | 'delivered' | 'failed';
  next_attempt_at: number | null;
  last_attempt_at: number;
  last_status: number | null;
  last_error: string | null;
  last_latency_ms: number;
  last_response_start: string | null;
}

export interface Coordination {
  /** Takes up to `want` tokens from the shared bucket `key` (created full), refilled at `limits.perMinute`. */
  takeTokens(key: string, limits: BucketLimits, want: number): Promise<BucketGrant>;
  /**
   * Renews the leases of `keep` this node holds, and claims free or expired ones of `candidates`
   * until it holds its fair share (candidates / live nodes, rounded up). A lease not renewed
   * lapses after `ttlMs`; the holder must stop using it before.
   */
  leaseRound(scope: string, node: string, keep: readonly string[], candidates: readonly string[], ttlMs: number): Promise<LeaseRound>;
  /** Drops this node's leases and its liveness in `scope` (a clean stop: others take over at once). */
  releaseAll(scope: string, node: string): Promise<void>;
  /** Stores outcomes; a later attempt's outcome replaces an earlier one. */
  putOutcomes(rows: readonly SharedOutcome[]): Promise<void>;
  /** The stored outcomes of these deliveries. */
  outcomesOf(deliveryIds: readonly string[]): Promise<SharedOutcome[]>;
  /** Outcomes stored after `cursor` (a `seq`; 0: from the first), in store order, at most `limit`. */
  outcomesAfter(cursor: bigint, limit: number): Promise<Array<SharedOutcome & { seq: bigint; written_at: number }>>;
  close(): Promise<void>;
}
