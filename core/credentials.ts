/**
 * API key secrets: generated here, stored only as SHA-256, compared in
 * constant time. The prefix tells key kinds apart in logs and in the
 * Authorization header without revealing the secret.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'fleet_key_';
/** OAuth client secrets and the access tokens issued for them: their own prefixes, so a bearer credential's kind is known before any lookup. */
export const OAUTH_CLIENT_SECRET_PREFIX = 'fleet_cs_';
export const OAUTH_TOKEN_PREFIX = 'fleet_at_';
/** Panel session tokens, carried only in the `fleet_session` cookie. */
export const SESSION_TOKEN_PREFIX = 'fleet_ses_';

export function generateSecret(prefix: string): string {
  return prefix + randomBytes(24).toString('base64url');
}

export function sha256Hex(secret: string): string {
  // One-shot hash: every authenticated request pays this, and createHash() costs ~3x more.
  return hash('sha256', secret, 'hex');
}

export function hashesEqual(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
