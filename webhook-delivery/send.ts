/**
 * One signed attempt: the headers of the delivery contract around body bytes
 * that never change between attempts. The timestamp (and so the signature) is
 * of this attempt; during a secret rotation's grace period the previous
 * secret signs too, in `X-Service-Signature-Previous`.
 */
import { postWebhook, type AttemptResult, type WebhookAgents } from './post-attempt.js';
import { signWebhook } from './signature.js';
import type { WebhookLookup } from './url-safety.js';

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
