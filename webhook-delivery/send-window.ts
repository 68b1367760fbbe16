/**
 * A customer's plan limit held exactly: at most `limit` sends in any window of
 * `windowMs` (a sliding window over the times of the last `limit` sends).
 *
 * Why not the token bucket alone: a bucket small enough to hold the limit
 * within a second (a tenth of a second's worth) loses every refill that comes
 * while it is full, so each pause of the sending thread (a long batch, a GC)
 * costs a customer at its limit deliveries it never gets back. The window
 * does not forget: after a pause the sends it missed go as soon as the last
 * second has room for them. The Allowance (limiter.ts) keeps a bucket too, only to
 * spread a customer's sends over the second, with room for a quarter of it.
 */
export class SendWindow {
  /** Times of the sends still in the window, oldest first from `head` (a ring). */
  private times: Float64Array;
  private head = 0;
  private count = 0;

  constructor(
    limit: number,
    private readonly windowMs = 1000,
  ) {
    this.times = new Float64Array(Math.max(1, limit));
  }

  get limit(): number {
    return this.times.length;
  }

  /** How many sends the window allows at `now`. */
  room(now: number): number {
    this.expire(now);
    return this.times.length - this.count;
  }

  /** Records a send at `now`; false, recording nothing, when the window is full. */
  take(now: number): boolean {
    this.expire(now);
    if (this.count === this.times.length) return false;
    this.times[(this.head + this.count) % this.times.length] = now;
    this.count += 1;
    return true;
  }

  /** The same window under another limit: the newest sends are kept, up to it. */
  resized(limit: number): SendWindow {
    const next = new SendWindow(limit, this.windowMs);
    const keep = Math.min(this.count, next.times.length);
    for (let i = this.count - keep; i < this.count; i++) next.times[next.count++] = this.times[(this.head + i) % this.times.length]!;
    return next;
  }

  private expire(now: number): void {
    while (this.count > 0 && this.times[this.head]! <= now - this.windowMs) {
      this.head = (this.head + 1) % this.times.length;
      this.count -= 1;
    }
  }
}
