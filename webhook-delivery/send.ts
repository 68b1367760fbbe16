/**
 * The sender: one signed attempt, the headers of the delivery contract around
 * body bytes that never change between attempts. The timestamp (and so the
 * signature) is of this attempt; during a secret rotation's grace period the
 * previous secret signs too, in `X-Service-Signature-Previous`. Each customer
 * sends over keep-alive pools of its own, so one customer's slow or dead
 * receiver only ever occupies that customer's sockets (even when another
 * customer's endpoints are on the same host).
 */
import type { Logger } from '../core/logger.js';
import type { SecretBox } from '../core/secret-box.js';
import { previousSecretIn } from './endpoint-cache.js';
import type { DueRow } from './lanes.js';
import { createWebhookAgents, postWebhook, type AttemptResult, type WebhookAgents } from './post-attempt.js';
import { signWebhook } from './signature.js';
import { guardedLookup, type WebhookLookup } from './url-safety.js';

export interface SignedAttempt {
  url: string;
  body: Buffer;
  kind: string;
  eventId: string;
  deliveryId: string;
  attempt: number;
  secret: string;
  /** The rotated-out secret while its grace period lasts. */
  previousSecret: string | null;
  nowMs: number;
}

export const USER_AGENT = 'fleet-webhooks/1';

export function signedHeaders(a: SignedAttempt): Record<string, string> {
  const timestamp = Math.floor(a.nowMs / 1000);
  const headers: Record<string, string> = {
    'User-Agent': USER_AGENT,
    'X-Service-Timestamp': String(timestamp),
    'X-Service-Signature': signWebhook(a.secret, timestamp, a.body),
    'X-Service-Event': a.kind,
    'X-Service-Event-Id': a.eventId,
    'X-Service-Delivery-Id': a.deliveryId,
    'X-Service-Attempt': String(a.attempt),
  };
  if (a.previousSecret) headers['X-Service-Signature-Previous'] = signWebhook(a.previousSecret, timestamp, a.body);
  return headers;
}

export function sendSigned(a: SignedAttempt, transport: { lookup: WebhookLookup; agents: WebhookAgents }): Promise<AttemptResult> {
  return postWebhook({ url: a.url, body: a.body, headers: signedHeaders(a), lookup: transport.lookup, agents: transport.agents });
}

export interface SenderOptions {
  box: SecretBox;
  allowPrivate: boolean;
  log: Logger;
  /** Sockets per receiver host for the customer's pools, as many as its requests in flight. */
  socketsFor(customerId: string): number;
}

/** Sends queued deliveries for the dispatcher: each customer's pools, and the endpoints' secrets opened once. */
export class Sender {
  /** Each customer's connection pools (kept while delivery runs: idle sockets close by themselves). */
  private readonly agents = new Map<string, WebhookAgents>();
  private readonly openedSecrets = new Map<string, string>();
  private readonly lookup: WebhookLookup;

  constructor(private readonly o: SenderOptions) {
    this.lookup = guardedLookup(o.allowPrivate);
  }

  /** Attempt number `attempt` of `row`, signed at `now`; never throws (a fault is a failed attempt). */
  async send(row: DueRow, attempt: number, now: number): Promise<AttemptResult> {
    const previous = previousSecretIn(row.endpoint, now);
    try {
      return await sendSigned(
        {
          url: row.endpoint.url,
          body: Buffer.from(row.body),
          kind: row.kind,
          eventId: row.event_id,
          deliveryId: row.delivery_id,
          attempt,
          secret: this.open(row.endpoint.secret),
          previousSecret: previous === null ? null : this.open(previous),
          nowMs: now,
        },
        { lookup: this.lookup, agents: this.agentsOf(row.customer_id) },
      );
    } catch (err) {
      // A secret that does not open (another server key) is a configuration fault: retried like a failure.
      this.o.log.error({ err, webhook: row.webhook_id }, 'webhook attempt could not be made');
      return { ok: false, status: null, latencyMs: 0, responseBodyStart: '', error: 'request_failed' };
    }
  }

  /** The customer's rate changed: its pools take as many sockets as its requests in flight. */
  resize(customerId: string, sockets: number): void {
    this.agents.get(customerId)?.resize(sockets);
  }

  destroy(): void {
    for (const agents of this.agents.values()) agents.destroy();
  }

  private agentsOf(customerId: string): WebhookAgents {
    let agents = this.agents.get(customerId);
    if (!agents) {
      agents = createWebhookAgents({ maxSocketsPerOrigin: this.o.socketsFor(customerId) });
      this.agents.set(customerId, agents);
    }
    return agents;
  }

  private open(sealed: string): string {
    let secret = this.openedSecrets.get(sealed);
    if (secret === undefined) {
      secret = this.o.box.open(sealed);
      this.openedSecrets.set(sealed, secret);
    }
    return secret;
  }
}
