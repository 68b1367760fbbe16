/**
 * The plan rate of each customer, as an Allowance on the injected clock: a sliding
 * window holds the plan's deliveries per second exactly (send-window.ts; excess waits
 * in the queue, nothing is dropped), and a token bucket (core/token-bucket.ts) spreads
 * them over the second.
 */
import type { Plan } from '../core/events.js';
import { availableTokens, fullBucket, take, type BucketLimits, type BucketState } from '../core/token-bucket.js';
import { SendWindow } from './send-window.js';

/** Deliveries per second by plan; Enterprise is agreed per customer (`fleet customer set-webhook-limit`), FLEET_WEBHOOK_ENTERPRISE_PER_S without an agreement. */
export const PLAN_DELIVERIES_PER_S: Record<Exclude<Plan, 'enterprise'>, number> = { free: 10, pro: 100 };

/**
 * A customer's bucket: `perS` a second, at most a quarter of a second's worth at once. It only
 * spreads the sends; the send window holds the limit (a bucket that small loses refills during a
 * pause of the thread, one big enough not to would let two seconds' worth into one).
 */
function bucketLimits(perS: number): BucketLimits {
  return { capacity: Math.max(1, Math.ceil(perS / 4)), perMinute: perS * 60 };
}

/** Requests (and sockets per receiver host) in flight for one customer: enough to reach its rate against a slow receiver, bounded so sockets stay few. */
export function concurrencyFor(perS: number): number {
  return Math.min(Math.max(perS, 4), 256);
}

/** What a customer may send: at most `perS` in any second, spread over it. */
export class Allowance {
  private readonly bucket: BucketState;
  private window: SendWindow;

  constructor(
    public perS: number,
    now: number,
  ) {
    this.bucket = fullBucket(bucketLimits(perS), now);
    this.window = new SendWindow(perS);
  }

  /** The deliveries the customer may start now: what both its bucket and its send window allow. */
  room(now: number): number {
    return Math.min(Math.floor(availableTokens(this.bucket, bucketLimits(this.perS), now) + 1e-9), this.window.room(now));
  }

  /** Takes one send at `now`; false, taking nothing from the window, when either is out. */
  take(now: number): boolean {
    if (this.window.room(now) < 1 || !take(this.bucket, bucketLimits(this.perS), now).allowed) return false;
    this.window.take(now);
    return true;
  }

  /** A new agreed rate: the last second's sends count against it. */
  resize(perS: number): void {
    this.perS = perS;
    this.window = this.window.resized(perS);
  }
}
