/**
 * Lets one log line per key through per interval and counts the ones it held
 * back, so the next line can say how many were skipped. Hostile input must
 * never write the log at the rate it arrives.
 */
const MAX_KEYS = 10_000;

interface Window {
  at: number;
  suppressed: number;
}

export class LogThrottle {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly intervalMs: number) {}

  /** How many lines of `key` were held back since the last one let through, or -1 to hold this one back. */
  take(key: string, now: number): number {
    const w = this.windows.get(key);
    if (w && now - w.at < this.intervalMs) {
      w.suppressed += 1;
      return -1;
    }
    const suppressed = w?.suppressed ?? 0;
    if (w) {
      w.at = now;
      w.suppressed = 0;
    } else {
      if (this.windows.size >= MAX_KEYS) this.windows.clear(); // a scan from many addresses: forget, do not grow
      this.windows.set(key, { at: now, suppressed: 0 });
    }
    return suppressed;
  }
}
