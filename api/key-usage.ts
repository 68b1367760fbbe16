/**
 * `last_used_at` of API keys without a store append per request: uses are
 * noted in memory and flushed as one `ApiKeysUsed` event per tenant per
 * interval (default 60 s) and on shutdown. Lists show the fresher of the
 * read model and this node's memory, so they are exact on the node that
 * served the request and accurate to the interval everywhere else.
 */
import type { EventStore } from '../core/event-store/port.js';
import { randomUuid } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { streams } from '../core/streams.js';

export const DEFAULT_KEY_USAGE_FLUSH_MS = 60_000;

export class KeyUsageRecorder {
  /** Uses not flushed yet: key id -> tenant and time. */
  private pending = new Map<string, { customerId: string; at: number }>();
  /** Latest use seen by this node (bounded by the number of keys). */
  private readonly latest = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly log: Logger,
    private readonly intervalMs = DEFAULT_KEY_USAGE_FLUSH_MS,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  touch(customerId: string, keyId: string, at: number): void {
    const before = this.latest.get(keyId);
    if (before !== undefined && before >= at) return;
    this.latest.set(keyId, at);
    this.pending.set(keyId, { customerId, at });
  }

  lastUsed(keyId: string): number | null {
    return this.latest.get(keyId) ?? null;
  }

  /** Appends what was noted since the last flush: one event per tenant. */
  flush(): Promise<void> {
    this.flushing ??= this.flushPending().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flushing;
    await this.flush();
  }

  private async flushPending(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const byTenant = new Map<string, Array<{ key_id: string; last_used_at: number }>>();
    for (const [keyId, use] of batch) {
      const keys = byTenant.get(use.customerId) ?? [];
      keys.push({ key_id: keyId, last_used_at: use.at });
      byTenant.set(use.customerId, keys);
    }
    for (const [customerId, keys] of byTenant) {
      try {
        await this.store.appendToStream(streams.tenant(customerId), [
          { id: randomUuid(), type: 'ApiKeysUsed', data: { customer_id: customerId, keys } },
        ]);
      } catch (err) {
        // Kept for the next flush unless a newer use replaced it meanwhile.
        for (const k of keys) if (!this.pending.has(k.key_id)) this.pending.set(k.key_id, { customerId, at: k.last_used_at });
        this.log.warn({ err, customerId }, 'could not record API key usage; retrying at the next flush');
      }
    }
  }
}
