import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret } from '../../core/webhook-endpoint.js';
import { signWebhook, verifyWebhook } from '../../webhook-delivery/signature.js';

const secret = 'whsec_test-secret-é';
const ts = 1_764_000_000;
const body = Buffer.from('{"event":"device.online","event_id":"e1","name":"Zoë"}', 'utf8');

/** Independent computation of the documented scheme. */
function reference(key: string, timestamp: number, raw: Buffer): string {
  const mac = createHmac('sha256', Buffer.from(key, 'utf8'));
  mac.update(Buffer.concat([Buffer.from(String(timestamp), 'ascii'), Buffer.from('.'), raw]));
  return `sha256=${mac.digest('hex')}`;
}

describe('signWebhook', () => {
  it('matches an independently computed HMAC-SHA256 of "timestamp.body"', () => {
    const sig = signWebhook(secret, ts, body);
    expect(sig).toBe(reference(secret, ts, body));
    expect(sig).toMatch(/^sha256=[0-9a-f]{64}$/);
  });

  it('signs a string body as its UTF-8 bytes', () => {
    expect(signWebhook(secret, ts, body.toString('utf8'))).toBe(signWebhook(secret, ts, body));
  });

  it('matches a fixed vector computed outside node', () => {
    // HMAC-SHA256(key "k", "1.{}"), computed with openssl: printf '1.{}' | openssl dgst -sha256 -hmac k
    expect(signWebhook('k', 1, '{}')).toBe('sha256=3dd49b2593d0f9a349e9e71c4bde3e2b862c2be4003fe9b4ba81332029310158');
  });
});

describe('verifyWebhook', () => {
  const header = signWebhook(secret, ts, body);

  it('accepts the right secret, body and a current timestamp', () => {
    expect(verifyWebhook({ secret, header, timestamp: ts, body, nowS: ts + 10 })).toBe(true);
    expect(verifyWebhook({ secret, header, timestamp: String(ts), body, nowS: ts - 10 })).toBe(true);
  });

  it('refuses a wrong secret', () => {
    expect(verifyWebhook({ secret: 'whsec_other', header, timestamp: ts, body, nowS: ts })).toBe(false);
  });

  it('refuses a tampered body', () => {
    const tampered = Buffer.from(body);
    tampered.writeUInt8(tampered.readUInt8(5) ^ 1, 5);
    expect(verifyWebhook({ secret, header, timestamp: ts, body: tampered, nowS: ts })).toBe(false);
  });

  it('refuses a stale or future timestamp outside the tolerance', () => {
    expect(verifyWebhook({ secret, header, timestamp: ts, body, nowS: ts + 301 })).toBe(false);
    expect(verifyWebhook({ secret, header, timestamp: ts, body, nowS: ts - 301 })).toBe(false);
    expect(verifyWebhook({ secret, header, timestamp: ts, body, nowS: ts + 301, toleranceS: 600 })).toBe(true);
  });

  it('refuses a signature made for another timestamp', () => {
    expect(verifyWebhook({ secret, header, timestamp: ts + 1, body, nowS: ts })).toBe(false);
  });

  it('refuses malformed headers and timestamps without throwing', () => {
    expect(verifyWebhook({ secret, header: undefined, timestamp: ts, body, nowS: ts })).toBe(false);
    expect(verifyWebhook({ secret, header: 'sha256=abc', timestamp: ts, body, nowS: ts })).toBe(false);
    expect(verifyWebhook({ secret, header: header.toUpperCase(), timestamp: ts, body, nowS: ts })).toBe(false);
    expect(verifyWebhook({ secret, header, timestamp: '17e8', body, nowS: ts })).toBe(false);
    expect(verifyWebhook({ secret, header, timestamp: undefined, body, nowS: ts })).toBe(false);
  });
});

describe('generateWebhookSecret', () => {
  it('is whsec_ plus 32 random bytes in base64url', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(6), 'base64url')).toHaveLength(32);
    expect(a).not.toBe(b);
  });
});
