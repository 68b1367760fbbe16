/**
 * Which new device connections the gateway takes. Every socket is a file
 * descriptor, and one process shares its descriptors between the gateway,
 * the HTTP server, the SQLite files and webhook sockets: a gateway that used
 * them all would leave /healthz and the API unable to accept anything. So the
 * gateway's total is kept below the process's open-file limit, one remote
 * address may hold only its share, and an address that keeps hitting its cap
 * is turned away at accept for a growing while (backoff) before any work is
 * done for it.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionRejection } from '../core/gateway-counters.js';

export interface FileLimit {
  /** The soft RLIMIT_NOFILE: the most descriptors this process may have open. */
  soft: number;
  /** Where it came from: Linux tells in /proc; elsewhere it is assumed. */
  source: 'proc' | 'assumed';
}

/**
 * Node has no API for RLIMIT_NOFILE. Linux shows it in /proc/self/limits (Node raises
 * the soft limit to the hard one at start, so the value read there is the one that
 * applies). Where that file does not exist (macOS, Windows) the common POSIX default
 * of 1024 is assumed: a cap that is too low is safe, one that is too high is not.
 * FLEET_MAX_TOTAL_CONNECTIONS is taken as given when the limit is only assumed.
 */
export const ASSUMED_FILE_LIMIT = 1024;

export function readFileLimit(read: () => string = () => readFileSync('/proc/self/limits', 'utf8')): FileLimit {
  try {
    const soft = parseFileLimit(read());
    if (soft !== null) return { soft, source: 'proc' };
  } catch {
    // No /proc: fall through to the assumption.
  }
  return { soft: ASSUMED_FILE_LIMIT, source: 'assumed' };
}

/** The soft value of the `Max open files` row; `unlimited` reads as a million. */
export function parseFileLimit(procLimits: string): number | null {
  const match = /^Max open files\s+(\S+)/m.exec(procLimits);
  if (!match) return null;
  if (match[1] === 'unlimited') return 1_000_000;
  const n = Number(match[1]);
  return Number.isInteger(n) && n > 0 ? n : null;
}

/**
 * Descriptors kept back from devices: the HTTP server's clients, the event store and
 * read-model SQLite files (each with its WAL and shared-memory file, plus the writer
 * thread's), webhook deliveries, the log. A fifth of the limit, at least 256.
 */
export function reservedDescriptors(limit: number): number {
  return Math.max(256, Math.ceil(limit / 5));
}

/** The gateway's total: the configured one when it fits under the limit less the reserve, else that bound. */
export function totalConnectionCap(limit: FileLimit, configured: number | null): number {
  const bound = Math.max(1, limit.soft - reservedDescriptors(limit.soft));
  if (configured === null) return bound;
  return limit.source === 'assumed' ? configured : Math.min(configured, bound);
}

export type Rejection = Exclude<ConnectionRejection, 'listener_cap'>;

/** First and longest time an address that hit its cap is turned away at accept. */
export const MIN_BACKOFF_MS = 1_000;
export const MAX_BACKOFF_MS = 60_000;
/** Addresses remembered for backoff; a scan from many addresses clears the table rather than grow it. */
const MAX_BACKOFF_ENTRIES = 10_000;

interface Backoff {
  until: number;
  ms: number;
}

/** Open connections in total and per remote address; answers whether the next one may stay. */
export class ConnectionAdmission {
  private open = 0;
  private readonly byAddress = new Map<string, number>();
  private readonly backoff = new Map<string, Backoff>();

  constructor(
    readonly maxTotal: number,
    readonly maxPerAddress: number,
  ) {}

  get openConnections(): number {
    return this.open;
  }

  /** Null when the connection is admitted (and counted until `release`), else why not. */
  admit(address: string, now: number): Rejection | null {
    const penalty = this.backoff.get(address);
    if (penalty && penalty.until > now) return 'address_backoff';
    if (this.open >= this.maxTotal) return 'total_cap';
    const held = this.byAddress.get(address) ?? 0;
    if (held >= this.maxPerAddress) {
      // Hitting the cap again soon after the last backoff ended doubles the next one.
      const ms = penalty && now - penalty.until < penalty.ms ? Math.min(penalty.ms * 2, MAX_BACKOFF_MS) : MIN_BACKOFF_MS;
      if (this.backoff.size >= MAX_BACKOFF_ENTRIES) this.backoff.clear();
      this.backoff.set(address, { until: now + ms, ms });
      return 'address_cap';
    }
    this.open += 1;
    this.byAddress.set(address, held + 1);
    return null;
  }

  release(address: string): void {
    this.open -= 1;
    const held = (this.byAddress.get(address) ?? 1) - 1;
    if (held > 0) this.byAddress.set(address, held);
    else this.byAddress.delete(address);
  }
}
