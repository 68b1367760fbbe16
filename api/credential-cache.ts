/**
 * Credentials found by hash, remembered until the next committed change to
 * any tenant's stream (keys created or revoked, OAuth clients deleted, tokens
 * issued, plans). Authentication runs on every request and its read-model
 * query cost ~15 us; the cache is cleared from the projection runner's
 * committed batches, in the same tick as the commit, so a revoked key is
 * refused from the next request on. Misses are never remembered: a key made a
 * moment ago is looked up again.
 */
import type { RecordedEvent } from '../core/event-store/port.js';
import { streams } from '../core/streams.js';

const TENANT_STREAM = streams.tenant('');

export class CredentialCache<T> {
  private readonly found = new Map<string, T>();

  constructor(private readonly maxEntries = 10_000) {}

  get(hash: string, find: () => T | null): T | null {
    const cached = this.found.get(hash);
    if (cached !== undefined) return cached;
    const row = find();
    if (row !== null) {
      if (this.found.size >= this.maxEntries) this.found.clear();
      this.found.set(hash, row);
    }
    return row;
  }

  /** Forgets everything when a batch touched a tenant stream (usage stamps aside: they change no credential). */
  invalidateOn(events: readonly RecordedEvent[]): void {
    if (this.found.size === 0) return;
    for (const e of events) {
      if (e.type !== 'ApiKeysUsed' && e.stream.startsWith(TENANT_STREAM)) {
        this.found.clear();
        return;
      }
    }
  }
}
