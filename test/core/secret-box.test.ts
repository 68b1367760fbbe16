import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { SecretBox } from '../../core/secret-box.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('SecretBox', () => {
  it('seals so that the plaintext is not in the sealed text, and opens it again', () => {
    const box = SecretBox.fromKey(randomBytes(32));
    const sealed = box.seal('whsec_abc123');
    expect(sealed).not.toContain('whsec_abc123');
    expect(box.open(sealed)).toBe('whsec_abc123');
    expect(box.seal('whsec_abc123')).not.toBe(sealed); // a fresh IV each time
  });

  it('derives a stable 32-byte key per label, unlike the sealing key and unlike another label or server key', () => {
    const key = randomBytes(32);
    const csrf = SecretBox.fromKey(key).derivedKey('csrf');
    expect(csrf).toHaveLength(32);
    expect(SecretBox.fromKey(Buffer.from(key)).derivedKey('csrf').equals(csrf)).toBe(true);
    expect(csrf.equals(key)).toBe(false);
    expect(SecretBox.fromKey(key).derivedKey('other').equals(csrf)).toBe(false);
    expect(SecretBox.fromKey(randomBytes(32)).derivedKey('csrf').equals(csrf)).toBe(false);
  });

  it('refuses a sealed secret that was tampered with or sealed under another key', () => {
    const box = SecretBox.fromKey(randomBytes(32));
    const sealed = box.seal('whsec_abc123');
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[3]!, 'base64url');
    flipped[0]! ^= 1;
    expect(() => box.open([...parts.slice(0, 3), flipped.toString('base64url')].join('.'))).toThrow();
    expect(() => SecretBox.fromKey(randomBytes(32)).open(sealed)).toThrow();
  });

  it('creates a private key file on first use and reads the same key afterwards', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-key-'));
    dirs.push(dir);
    const file = join(dir, 'data.key');
    const sealed = SecretBox.load({ file }).seal('s');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(SecretBox.load({ file }).open(sealed)).toBe('s');
    expect(SecretBox.load({ base64: readFileSync(file, 'utf8').trim() }).open(sealed)).toBe('s');
  });

  it('refuses a key of the wrong length', () => {
    expect(() => SecretBox.load({ base64: randomBytes(16).toString('base64') })).toThrow(/32 bytes/);
  });
});
