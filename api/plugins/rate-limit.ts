/**
 * Plan rate limits: one token bucket per tenant (capacity = burst, refilled
 * at the per-minute rate spread evenly), checked after authentication. Every
 * authenticated response carries the IETF draft fields (draft-ietf-httpapi-
 * ratelimit-headers-08+) and the X-RateLimit-* trio; over the limit is a 429
 * problem with `code: rate_limited` and `Retry-After`.
 *
 * Buckets live in this process: N API nodes behind a balancer allow up to N
 * times the limit. A shared limiter needs a shared store; see docs/api-platform.md.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.js';
import type { Plan } from '../../core/events.js';
import type { ApiSettings, RateLimit } from '../context.js';
import { ApiError } from '../problem.js';
import { fullBucket, take, type BucketState } from '../token-bucket.js';

/** SPEC §8 for free and pro; enterprise is "by agreement": a generous default, overridden per tenant in settings. */
export const PLAN_RATE_LIMITS: Record<Plan, RateLimit> = {
  free: { perMinute: 60, burst: 120 },
  pro: { perMinute: 600, burst: 1200 },
  enterprise: { perMinute: 60_000, burst: 120_000 },
};

export function limitFor(settings: ApiSettings['rateLimits'], customerId: string, plan: Plan): RateLimit {
  return settings.tenants?.[customerId] ?? settings.plans?.[plan] ?? PLAN_RATE_LIMITS[plan];
}

/**
 * The draft's quota policy is "q units per w seconds". For a bucket that is
 * q = burst and w = the time to refill an empty bucket, which states both the
 * burst and the sustained rate (q / w = perMinute / 60).
 */
export function policyHeader(plan: Plan, limit: RateLimit): string {
  return `"${plan}";q=${limit.burst};w=${Math.ceil((limit.burst * 60) / limit.perMinute)}`;
}

export function registerRateLimit(app: FastifyInstance, clock: Clock, settings: ApiSettings['rateLimits']): void {
  const buckets = new Map<string, BucketState>();
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const auth = request.auth;
    if (!auth) return;
    const limit = limitFor(settings, auth.customerId, auth.plan);
    const limits = { capacity: limit.burst, perMinute: limit.perMinute };
    const now = clock.now();
    let bucket = buckets.get(auth.customerId);
    if (!bucket) {
      bucket = fullBucket(limits, now);
      buckets.set(auth.customerId, bucket);
    }
    const result = take(bucket, limits, now);
    reply.header('RateLimit-Policy', policyHeader(auth.plan, limit));
    reply.header('RateLimit', `"${auth.plan}";r=${result.remaining};t=${result.resetS}`);
    reply.header('X-RateLimit-Limit', String(limit.burst));
    reply.header('X-RateLimit-Remaining', String(result.remaining));
    // Unix seconds at which the bucket is full again (the GitHub convention for this header).
    reply.header('X-RateLimit-Reset', String(Math.ceil(now / 1000) + result.resetS));
    if (!result.allowed) {
      throw new ApiError(
        429,
        'rate_limited',
        `Rate limit of the ${auth.plan} plan exceeded (${limit.perMinute} requests a minute, bursts of ${limit.burst}); retry in ${result.retryAfterS} s.`,
        [],
        { 'Retry-After': String(result.retryAfterS) },
      );
    }
  });
}
