/**
 * Endpoints that delivery disables on its own: the receiver answered 410 Gone,
 * or every attempt failed for days. The endpoint stops in the dispatcher's
 * memory (the endpoint cache) and in the delivery database in the step that
 * commits the outcome, so no further attempt to it starts while the
 * WebhookEndpointDisabled event goes through the log and back: waiting for the
 * event let the endpoint's other lanes send for tens of milliseconds more.
 *
 * The event is appended after the commit. Until the projector applies it back
 * from the log, the endpoint's row keeps it (`disable_pending`, with its id): an
 * append lost to a crash or a failed one is made at the next start (one made
 * twice is stored once), and an earlier update applied meanwhile cannot enable
 * the endpoint again (projections/webhooks/projector.ts).
 */
import type Database from 'better-sqlite3';
import type { Clock } from '../core/clock.js';
import { disableWebhookEndpoint } from '../core/commands/webhook-delivery.js';
import type { EventStore } from '../core/event-store/port.js';
import type { WebhookEndpointDisabled } from '../core/events.js';
import { randomUuid } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { EndpointCache } from './endpoint-cache.js';

type Reason = WebhookEndpointDisabled['data']['reason'];

interface Pending {
  id: string;
  reason: Reason;
  detail: string;
  at: number;
}

export class EndpointDisabler {
  private readonly q;
  /** Disabled in the transaction under way, announced once it is committed. */
  private readonly decided: Array<{ webhook_id: string; customer_id: string; pending: Pending }> = [];

  constructor(
    db: Database.Database,
    private readonly endpoints: EndpointCache,
    private readonly o: { store: EventStore; clock: Clock; log: Logger },
  ) {
    this.q = {
      // Only an enabled endpoint: one disabled already (by its customer, or by an earlier 410) is announced once.
      disable: db.prepare('UPDATE wh_endpoints SET enabled = 0, disable_pending = ? WHERE webhook_id = ? AND enabled = 1 AND deleted = 0'),
      pending: db.prepare('SELECT webhook_id, customer_id, disable_pending FROM wh_endpoints WHERE disable_pending IS NOT NULL'),
    };
  }

  /** Inside the transaction that commits the outcome: the endpoint stops now. */
  disable(endpoint: { webhook_id: string; customer_id: string }, reason: Reason, detail: string, at: number): void {
    this.endpoints.disable(endpoint.webhook_id);
    const pending: Pending = { id: randomUuid(), reason, detail, at };
    if (this.q.disable.run(JSON.stringify(pending), endpoint.webhook_id).changes === 0) return;
    this.decided.push({ ...endpoint, pending });
  }

  /** After the commit: appends the events of what `disable` decided. */
  announce(): void {
    for (const d of this.decided.splice(0)) this.append(d.webhook_id, d.customer_id, JSON.stringify(d.pending));
  }

  /** At start: appends the events a crash or a failed append left unappended. */
  announceLeftOver(): void {
    for (const r of this.q.pending.all() as Array<{ webhook_id: string; customer_id: string; disable_pending: string }>) {
      this.append(r.webhook_id, r.customer_id, r.disable_pending);
    }
  }

  private append(webhookId: string, customerId: string, sealed: string): void {
    const p = JSON.parse(sealed) as Pending;
    this.o.log.warn({ webhook: webhookId, reason: p.reason }, 'webhook endpoint disabled');
    void disableWebhookEndpoint(this.o.store, this.o.clock, { webhook_id: webhookId, customer_id: customerId, reason: p.reason, detail: p.detail }, { id: p.id, at: p.at })
      .catch((err: unknown) => this.o.log.error({ err, webhook: webhookId }, 'the disabling of a webhook endpoint may not be in the log; it is appended at the next start'));
  }
}
