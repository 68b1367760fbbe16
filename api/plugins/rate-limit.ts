/**
 * Plan rate limits: one token bucket per tenant (capacity = burst, refilled
 * at the per-minute rate spread evenly), checked after authentication. Every
 * authenticated response carries the IETF draft fields (draft-ietf-httpapi-
 * ratelimit-headers-08+) and the X-RateLimit-* trio; over the limit is a 429
 * problem with `code: rate_limited` and `Retry-After`.
 *
 * On one machine buckets live in this process; API nodes sharing a PostgreSQL
 * share them (api/shared-rate-limit.ts), so N nodes grant no more than the plan.
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Clock } from '../../core/clock.js';
import type { Plan } from '../../core/events.js';
import type { ApiSettings, RateLimit } from '../context.js';
import { ApiError } from '../problem.js';
import { fullBucket, take, type BucketState, type TakeResult } from '../../core/token-bucket.js';
import type { SharedBudgets } from '../shared-rate-limit.js';

/** The plan limits for free and pro (docs/api-decisions.md, Rate limits); enterprise is "by agreement": a generous default until the customer's agreement is set (CustomerRateLimitSet). */
export const PLAN_RATE_LIMITS: Record<Plan, RateLimit> = {
  free: { perMinute: 60, burst: 120 },
  pro: { perMinute: 600, burst: 1200 },
  enterprise: { perMinute: 60_000, burst: 120_000 },
};

/** The customer's agreed limit, else its plan's (as configured, else these defaults). */
function limitFor(settings: ApiSettings['rateLimits'], plan: Plan, agreed: RateLimit | null): RateLimit {
  return agreed ?? settings.plans?.[plan] ?? PLAN_RATE_LIMITS[plan];
}

const sameLimit = (a: RateLimit, b: RateLimit) => a.perMinute === b.perMinute && a.burst === b.burst;

/**
 * The draft's quota policy is "q units per w seconds". For a bucket that is
 * q = burst and w = the time to refill an empty bucket, which states both the
 * burst and the sustained rate (q / w = perMinute / 60).
 */
export function policyHeader(plan: Plan, limit: RateLimit): string {
  return `"${plan}";q=${limit.burst};w=${Math.ceil((limit.burst * 60) / limit.perMinute)}`;
}

/** A tenant's bucket with what its headers repeat on every response, worked out once per plan. */
interface TenantBudget {
  plan: Plan;
  limit: RateLimit;
  limits: { capacity: number; perMinute: number };
  bucket: BucketState;
  policy: string;
  limitHeader: string;
}

/** The hook that takes a token from the tenant's bucket (after authentication), or refuses with 429; `shared`: the bucket nodes share. */
export function rateLimitHook(clock: Clock, settings: ApiSettings['rateLimits'], shared: SharedBudgets | null = null): onRequestHookHandler {
  const budgets = new Map<string, TenantBudget>();
  const budgetOf = (customerId: string, plan: Plan, agreed: RateLimit | null, now: number): TenantBudget => {
    const limit = limitFor(settings, plan, agreed);
    const known = budgets.get(customerId);
    if (known && known.plan === plan && sameLimit(known.limit, limit)) return known;
    // First request, or the plan or the tenant's limit changed: the bucket carries over
    // (take() caps it at the new burst), the rest is worked out again.
    const limits = { capacity: limit.burst, perMinute: limit.perMinute };
    const budget = {
      plan,
      limit,
      limits,
      bucket: known?.bucket ?? fullBucket(limits, now),
      policy: policyHeader(plan, limit),
      limitHeader: String(limit.burst),
    };
    budgets.set(customerId, budget);
    return budget;
  };
  // A callback hook: nothing here waits, so it costs no promise per request.
  return (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const auth = request.auth;
    if (!auth) return done();
    const now = clock.now();
    const budget = budgetOf(auth.customerId, auth.plan, auth.rateLimit, now);
    const taken = shared ? shared.take(auth.customerId, budget.limits, now) : take(budget.bucket, budget.limits, now);
    if (taken instanceof Promise) {
      taken.then((result) => answer(request, reply, budget, result, now, done), done);
      return;
    }
    answer(request, reply, budget, taken, now, done);
  };
}

function answer(request: FastifyRequest, reply: FastifyReply, budget: TenantBudget, result: TakeResult, now: number, done: (err?: Error) => void): void {
  const auth = request.auth!;
  reply.headers({
    'ratelimit-policy': budget.policy,
    ratelimit: `"${auth.plan}";r=${result.remaining};t=${result.resetS}`,
    'x-ratelimit-limit': budget.limitHeader,
    'x-ratelimit-remaining': String(result.remaining),
    // Unix seconds at which the bucket is full again (the GitHub convention for this header).
    'x-ratelimit-reset': String(Math.ceil(now / 1000) + result.resetS),
  });
  if (result.allowed) return done();
  const { limit } = budget;
  done(
    new ApiError(
      429,
      'rate_limited',
      `Rate limit of the ${auth.plan} plan exceeded (${limit.perMinute} requests a minute, bursts of ${limit.burst}); retry in ${result.retryAfterS} s.`,
      [],
      { 'Retry-After': String(result.retryAfterS) },
    ),
  );
}
