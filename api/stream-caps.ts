/**
 * How many live streams (GET /v1/stream) are open, per credential and per
 * customer, and the caps on both: each stream holds a socket and a file
 * descriptor for as long as the client likes. Kept in this process, like the
 * request rate limiter: N API nodes allow N times the streams.
 */
export const STREAMS_PER_CREDENTIAL = 10;
export const STREAMS_PER_CUSTOMER = 50;

export interface StreamCapLimits {
  perCredential: number;
  perCustomer: number;
}

/** Which cap refused a stream, or null when it may open. */
export type StreamCapRefusal = 'credential' | 'customer' | null;

export class StreamCaps {
  private readonly byCredential = new Map<string, number>();
  private readonly byCustomer = new Map<string, number>();
  private refusedCount = 0;

  constructor(readonly limits: StreamCapLimits) {}

  /** Takes a place for a stream; returns its release (idempotent), or the cap that refused it. */
  reserve(customerId: string, credentialId: string): { release: () => void } | { refused: Exclude<StreamCapRefusal, null> } {
    const refused: StreamCapRefusal =
      (this.byCredential.get(credentialId) ?? 0) >= this.limits.perCredential
        ? 'credential'
        : (this.byCustomer.get(customerId) ?? 0) >= this.limits.perCustomer
          ? 'customer'
          : null;
    if (refused) {
      this.refusedCount++;
      return { refused };
    }
    add(this.byCredential, credentialId, 1);
    add(this.byCustomer, customerId, 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        add(this.byCredential, credentialId, -1);
        add(this.byCustomer, customerId, -1);
      },
    };
  }

  /** Streams open now, over every customer. */
  get openStreams(): number {
    let n = 0;
    for (const count of this.byCustomer.values()) n += count;
    return n;
  }

  /** Streams refused by a cap since start. */
  get refusedStreams(): number {
    return this.refusedCount;
  }
}

function add(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
