/**
 * Throttles events about refused devices (unknown IMEIs, logins over the wrong protocol):
 * at most one per key per interval, and only while the shared token bucket has a token.
 * A held-back occurrence is counted into the key's next written event (`count`).
 */
import type { TokenBucket } from '../core/token-bucket.js';

interface Tally {
  lastWrittenAt: number;
  unwritten: number;
}

export class KeyedThrottle {
  private readonly tallies = new Map<string, Tally>();

  constructor(
    private readonly intervalMs: number,
    private readonly bucket: TokenBucket,
    private readonly maxKeys = 10_000,
  ) {}

  /**
   * How many occurrences the event written now stands for; 0 when the key had one within the
   * interval, -1 when it is due but the bucket is empty (the caller counts those).
   */
  take(key: string, now: number): number {
    let tally = this.tallies.get(key);
    if (!tally) {
      if (this.tallies.size >= this.maxKeys) this.tallies.clear(); // a scan: forget, do not grow
      tally = { lastWrittenAt: -Infinity, unwritten: 0 };
      this.tallies.set(key, tally);
    }
    tally.unwritten += 1;
    if (now - tally.lastWrittenAt < this.intervalMs) return 0;
    if (!this.bucket.take(now)) return -1;
    const count = tally.unwritten;
    tally.unwritten = 0;
    tally.lastWrittenAt = now;
    return count;
  }
}
