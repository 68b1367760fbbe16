/**
 * Webhook signatures: HMAC-SHA256 over `<timestamp>.<raw body bytes>`, keyed
 * with the endpoint secret's UTF-8 bytes, sent as `sha256=<lowercase hex>`.
 * The timestamp is part of the signed bytes so a captured request cannot be
 * replayed later than the receiver's tolerance window.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_PREFIX = 'sha256=';
/** Receivers should refuse timestamps further than this from their clock. */
export const DEFAULT_TOLERANCE_S = 300;

/** `sha256=<hex>` for one attempt; `timestamp` is unix seconds. */
export function signWebhook(secret: string, timestamp: number, body: Buffer | string): string {
  const hmac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  hmac.update(`${Math.trunc(timestamp)}.`, 'utf8');
  // A string body is taken as its UTF-8 bytes, the bytes that go on the wire.
  hmac.update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  return SIGNATURE_PREFIX + hmac.digest('hex');
}

export interface VerifyWebhookInput {
  secret: string;
  /** The `X-Service-Signature` header value as received. */
  header: string | undefined;
  /** The `X-Service-Timestamp` header, unix seconds (string as received, or parsed). */
  timestamp: number | string | undefined;
  /** The raw body bytes, before any JSON parsing. */
  body: Buffer | string;
  toleranceS?: number;
  /** The receiver's clock in unix seconds; defaults to now. */
  nowS?: number;
}

/** True only for a well-formed, matching signature over a timestamp within tolerance. */
export function verifyWebhook({
  secret,
  header,
  timestamp,
  body,
  toleranceS = DEFAULT_TOLERANCE_S,
  nowS = Math.floor(Date.now() / 1000),
}: VerifyWebhookInput): boolean {
  if (typeof header !== 'string' || timestamp === undefined) return false;
  const ts = typeof timestamp === 'number' ? timestamp : /^\d{1,15}$/.test(timestamp) ? Number(timestamp) : NaN;
  if (!Number.isSafeInteger(ts)) return false;
  if (Math.abs(nowS - ts) > toleranceS) return false;
  const expected = Buffer.from(signWebhook(secret, ts, body), 'utf8');
  const received = Buffer.from(header.trim(), 'utf8');
  // timingSafeEqual throws on different lengths; the length of a hex digest is public anyway.
  if (received.length !== expected.length) return false;
  return timingSafeEqual(received, expected);
}
