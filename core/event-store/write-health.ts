/**
 * Whether the event store can write, for /readyz and /metrics: the one home of that state in a
 * process (main.ts keeps one). It learns from the outcomes every handle on the store records
 * (counting.ts: the platform thread's own, the gateway thread's as its snapshot brings them):
 * the latest one wins, so a failed append marks the store unwritable and a later commit marks
 * it writable. While unwritable and no append has said anything for WRITE_PROBE_INTERVAL_MS, it
 * probes with a small committed write (`EventStore.probeWrite`): a node /readyz takes out of
 * service gets no devices, hence no appends, and would otherwise never learn that the disk has
 * room again. Appends, while they come, are the better test (a probe of one row may fit in WAL
 * pages a failed batch left allocated). Without a probe (EventStoreDB) the next append tells.
 * Failures are logged once per interval, with a count.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { AppendCounts } from './counting.js';
import { WrongExpectedRevisionError } from './port.js';

/** An append (or a probe) the store could not write: the disk is full, the file read-only, I/O failed, the writer is gone. */
export class StoreWriteError extends Error {
  constructor(
    /** SQLite's extended code (SQLITE_FULL, SQLITE_READONLY, SQLITE_IOERR_WRITE, ...), WRITER_EXITED, or the EventStoreDB client's error type. */
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreWriteError';
  }
}

/** The code of a failure of the store itself; null for a conflict or a refused input, after which the store still writes. */
export function writeFailureCode(err: unknown): string | null {
  if (err instanceof WrongExpectedRevisionError) return null;
  return err instanceof StoreWriteError ? err.code : null;
}

/** What a handle last learnt about writing: a commit (`code` null) or a write failure, at `at` (ms, wall clock). */
export interface WriteOutcome {
  at: number;
  code: string | null;
}

export interface StoreWriteStatus {
  writable: boolean;
  /** The latest failure's code while unwritable. */
  code: string | null;
  /** When the store became unwritable (ms), while it is. */
  since: number | null;
}

/** Failure lines at most once per this interval, each with the count since the last one. */
export const WRITE_FAILURE_LOG_INTERVAL_MS = 10_000;
/** While unwritable, a probe once no outcome came for this long (each is a commit with its fsync). */
export const WRITE_PROBE_INTERVAL_MS = 2_000;
/** How often `start()` ticks: the interval lines and probes are due on a tick. */
const TICK_MS = 1_000;

export interface StoreWriteHealthOptions {
  clock: Clock;
  log: Logger;
  /** The append counts of every handle on the store in this process, read when needed. */
  sources: () => readonly AppendCounts[];
  /** A small committed write whose outcome reaches one of the sources; null: none (the next append tells). */
  probe: (() => Promise<void>) | null;
  logIntervalMs?: number;
  probeIntervalMs?: number;
}

export class StoreWriteHealth {
  private writable = true;
  private code: string | null = null;
  private since: number | null = null;
  private failuresWhileUnwritable = 0;
  /** The latest outcome applied: older ones (a snapshot that arrives late) change nothing. */
  private seenAt = -Infinity;
  private window: { start: number; counts: Record<string, number> };
  private lastProbeAt = -Infinity;
  private probing = false;
  private readonly logIntervalMs: number;
  private readonly probeIntervalMs: number;

  constructor(private readonly o: StoreWriteHealthOptions) {
    this.logIntervalMs = o.logIntervalMs ?? WRITE_FAILURE_LOG_INTERVAL_MS;
    this.probeIntervalMs = o.probeIntervalMs ?? WRITE_PROBE_INTERVAL_MS;
    this.window = { start: o.clock.now(), counts: this.failuresByCode() };
  }

  /** The state as of the sources' latest outcomes. */
  status(): StoreWriteStatus {
    this.refresh();
    return { writable: this.writable, code: this.code, since: this.since };
  }

  /** Ticks every second until the returned function is called. */
  start(): () => void {
    const timer = setInterval(() => this.tick(), TICK_MS);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Takes in the latest outcomes, writes the interval's failure line when it is due, and probes while unwritable. */
  tick(): void {
    this.refresh();
    const now = this.o.clock.now();
    if (now - this.window.start >= this.logIntervalMs) {
      const counts = this.failuresByCode();
      const fresh = Object.entries(counts)
        .map(([code, n]) => [code, n - (this.window.counts[code] ?? 0)] as const)
        .filter(([, n]) => n > 0)
        .sort((a, b) => b[1] - a[1]);
      const total = fresh.reduce((sum, [, n]) => sum + n, 0);
      if (total > 0) {
        const seconds = Math.round((now - this.window.start) / 1000);
        const codes = fresh.length === 1 ? fresh[0]![0] : fresh.map(([code, n]) => `${code} ${n.toLocaleString('en-US')}`).join(', ');
        this.o.log.warn(
          { failed: total, byCode: Object.fromEntries(fresh), writable: this.writable },
          `store appends failing: ${total.toLocaleString('en-US')} in the last ${seconds} s: ${codes}`,
        );
      }
      this.window = { start: now, counts };
    }
    const quiet = now - Math.max(this.lastProbeAt, this.seenAt) >= this.probeIntervalMs;
    if (!this.writable && this.o.probe && !this.probing && quiet) {
      this.probing = true;
      this.lastProbeAt = now;
      // Its outcome reaches a source (counting.ts); a failure is what is expected until there is room.
      void this.o
        .probe()
        .catch(() => {})
        .finally(() => {
          this.probing = false;
          this.refresh();
        });
    }
  }

  private failuresByCode(): Record<string, number> {
    const sum: Record<string, number> = {};
    for (const s of this.o.sources()) for (const [code, n] of Object.entries(s.failuresByCode)) sum[code] = (sum[code] ?? 0) + n;
    return sum;
  }

  private refresh(): void {
    let latest: WriteOutcome | null = null;
    for (const s of this.o.sources()) if (s.lastWrite && (!latest || s.lastWrite.at > latest.at)) latest = s.lastWrite;
    if (!latest || latest.at <= this.seenAt) return;
    this.seenAt = latest.at;
    if (latest.code !== null) {
      this.code = latest.code;
      if (!this.writable) return;
      this.writable = false;
      this.since = latest.at;
      this.failuresWhileUnwritable = Object.values(this.failuresByCode()).reduce((a, b) => a + b, 0);
      this.o.log.warn(
        { code: latest.code },
        `event store cannot write (${latest.code}): /readyz answers 503 until a write succeeds${this.o.probe ? `; probing once no append has answered for ${this.probeIntervalMs / 1000} s` : ''}`,
      );
    } else if (!this.writable) {
      const failed = Object.values(this.failuresByCode()).reduce((a, b) => a + b, 0) - this.failuresWhileUnwritable;
      const seconds = ((latest.at - (this.since ?? latest.at)) / 1000).toFixed(1);
      // At the level of the line that said it could not, so whoever saw that one sees this one.
      this.o.log.warn(
        { code: this.code, unwritableS: Number(seconds), failedMeanwhile: failed },
        `event store writes again after ${seconds} s (${this.code}; ${failed.toLocaleString('en-US')} more appends failed meanwhile): /readyz is ready again`,
      );
      this.writable = true;
      this.code = null;
      this.since = null;
    }
  }
}

/**
 * The level for a caller's own line about a failed append: `level`, or debug when the store
 * cannot write, which StoreWriteHealth logs once per interval with a count (a stack per
 * connection filled 1.1 MB of log in 20 s of a full disk).
 */
export function appendFailureLevel<L extends 'warn' | 'error'>(err: unknown, level: L): L | 'debug' {
  return writeFailureCode(err) === null ? level : 'debug';
}
