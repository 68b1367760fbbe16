/**
 * What sending to an endpoint takes (URL, sealed secrets, whether it is
 * enabled), kept in memory by the delivery thread so that a delivery does not
 * read its endpoint's row again. Every change of an endpoint is made by the
 * webhook projector on this same connection, which forgets the endpoint as it
 * writes; the next send reads the row afresh.
 */
import type Database from 'better-sqlite3';

export interface SendableEndpoint {
  url: string;
  /** Sealed (SecretBox) signing secret, and the previous one during a rotation's grace period. */
  secret: string;
  previous_secret: string | null;
  previous_valid_until: number | null;
  enabled: boolean;
}

export class EndpointCache {
  private readonly endpoints = new Map<string, SendableEndpoint | null>();
  private readonly read;

  constructor(db: Database.Database) {
    this.read = db.prepare('SELECT url, secret, previous_secret, previous_valid_until, enabled, deleted FROM wh_endpoints WHERE webhook_id = ?');
  }

  /** The endpoint as a send needs it; null when it does not exist or is deleted. */
  get(webhookId: string): SendableEndpoint | null {
    let endpoint = this.endpoints.get(webhookId);
    if (endpoint === undefined) {
      const row = this.read.get(webhookId) as (Omit<SendableEndpoint, 'enabled'> & { enabled: number; deleted: number }) | undefined;
      endpoint =
        row && !row.deleted
          ? { url: row.url, secret: row.secret, previous_secret: row.previous_secret, previous_valid_until: row.previous_valid_until, enabled: row.enabled === 1 }
          : null;
      this.endpoints.set(webhookId, endpoint);
    }
    return endpoint;
  }

  /** Delivery disabled the endpoint itself (a 410): sends stop now, not once the projector applies the event. */
  disable(webhookId: string): void {
    const endpoint = this.get(webhookId);
    if (endpoint) this.endpoints.set(webhookId, { ...endpoint, enabled: false });
  }

  /** The endpoint's row changed (or is about to): read it again next time. */
  forget(webhookId: string): void {
    this.endpoints.delete(webhookId);
  }
}

/** The sealed previous secret while its grace period lasts, else null. */
export function previousSecretIn(e: SendableEndpoint, now: number): string | null {
  return e.previous_secret && e.previous_valid_until !== null && now < e.previous_valid_until ? e.previous_secret : null;
}
