/**
 * A token bucket: `burst` tokens at once, refilled at `perSecond`. One bucket is shared
 * by every identifier, so a scan of made-up IMEIs (or a storm of reconnects) cannot write
 * to the store faster than the bucket allows, however many identifiers it uses.
 */
export class TokenBucket {
  private tokens: number;
  private at: number | null = null;

  constructor(
    readonly burst: number,
    readonly perSecond: number,
  ) {
    this.tokens = burst;
  }

  /** Takes one token if there is one. */
  take(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Milliseconds until a token is there (0: now). */
  waitMs(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.perSecond) * 1000);
  }

  private refill(now: number): void {
    if (this.at !== null && now > this.at) this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) / 1000) * this.perSecond);
    if (this.at === null || now > this.at) this.at = now;
  }
}
