/**
 * Plan rate limits held across API nodes (several nodes on one PostgreSQL): each tenant's bucket is
 * one row the nodes share (core/coordination). A node takes a few tokens at a time and spends them
 * locally, so N nodes together never grant more than the bucket holds; a customer may get up to
 * `chunk` fewer per other node (tokens a node took and has not spent). A take asks for as many as
 * requests wait on the node, which spend them at once. After a refusal the node
 * refuses locally until the next token is due, so a customer hammering over its limit costs the
 * database about one query per token the plan refills, not one per request.
 */
import type { Coordination } from '../core/coordination/port.js';
import type { Logger } from '../core/logger.js';
import { take, fullBucket, type BucketLimits, type BucketState, type TakeResult } from '../core/token-bucket.js';

/** The tokens a node takes at once: one for plans up to a few a second, a tenth of a second's worth for big agreements. */
export function chunkFor(limits: BucketLimits): number {
  return Math.max(1, Math.min(20, Math.floor(limits.perMinute / 600)));
}

interface SharedBudget {
  /** Tokens this node took from the shared bucket and has not spent. */
  local: number;
  /** The shared bucket's tokens at the last take. */
  shared: number;
  /** No token is due before this: refuse without asking (ms). */
  refusedUntil: number;
  taking: Promise<void> | null;
  /** Requests of this node waiting for the shared bucket: a take asks for at least this many. */
  waiting: number;
  /** While the database cannot be asked: this node's own bucket, as on one machine. */
  fallback: BucketState | null;
}

export class SharedBudgets {
  private readonly budgets = new Map<string, SharedBudget>();
  /** When an unreachable database was last logged: one line per 10 s, whatever the customer. */
  private errorLoggedAt = -Infinity;
  private errorsNotLogged = 0;

  constructor(
    private readonly coordination: Coordination,
    private readonly log: Logger,
  ) {}

  /** Takes one token for `customerId`: at once when this node holds one, else after asking the shared bucket. */
  take(customerId: string, limits: BucketLimits, now: number): TakeResult | Promise<TakeResult> {
    let b = this.budgets.get(customerId);
    if (!b) {
      b = { local: 0, shared: limits.capacity, refusedUntil: 0, taking: null, waiting: 0, fallback: null };
      this.budgets.set(customerId, b);
    }
    return this.spend(b, limits, now) ?? this.takeShared(customerId, b, limits, now);
  }

  /** Asks the shared bucket until this request has a token or a refusal (waiters share each ask, and may empty a take between them). */
  private async takeShared(customerId: string, b: SharedBudget, limits: BucketLimits, now: number): Promise<TakeResult> {
    b.waiting += 1;
    try {
      for (;;) {
        await this.refill(customerId, b, limits, now);
        const decided = this.spend(b, limits, now);
        if (decided) return decided;
      }
    } finally {
      b.waiting -= 1;
    }
  }

  /** A decision without the database: a held token, a refusal still in force, or the fallback bucket. */
  private spend(b: SharedBudget, limits: BucketLimits, now: number): TakeResult | null {
    if (b.local >= 1) {
      b.local -= 1;
      return result(true, b.shared + b.local, limits, 0);
    }
    if (b.fallback) return take(b.fallback, limits, now);
    if (now < b.refusedUntil) return this.refused(b, limits, now);
    return null;
  }

  private refill(customerId: string, b: SharedBudget, limits: BucketLimits, now: number): Promise<void> {
    b.taking ??= this.coordination
      .takeTokens(`api|${customerId}`, limits, Math.max(chunkFor(limits), b.waiting))
      .then(
        (grant) => {
          b.local += grant.granted;
          b.shared = grant.tokens;
          b.fallback = null;
          if (grant.granted === 0) b.refusedUntil = now + Math.ceil(((1 - grant.tokens) * 60_000) / limits.perMinute);
        },
        (err: unknown) => {
          if (now - this.errorLoggedAt >= 10_000) {
            this.log.warn({ err, customer: customerId, notLogged: this.errorsNotLogged }, 'shared rate limit unreachable: this node limits alone until it answers');
            this.errorLoggedAt = now;
            this.errorsNotLogged = 0;
          } else this.errorsNotLogged += 1;
          b.fallback = fullBucket(limits, now);
          setTimeout(() => (b.fallback = null), 5_000).unref();
        },
      )
      .finally(() => (b.taking = null));
    return b.taking;
  }

  private refused(b: SharedBudget, limits: BucketLimits, now: number): TakeResult {
    return result(false, b.shared + b.local, limits, Math.max(1, Math.ceil((b.refusedUntil - now) / 1000)));
  }
}

function result(allowed: boolean, tokens: number, limits: BucketLimits, retryAfterS: number): TakeResult {
  const perS = limits.perMinute / 60;
  return { allowed, remaining: Math.floor(tokens), resetS: Math.ceil(Math.max(0, limits.capacity - tokens) / perS), retryAfterS };
}
