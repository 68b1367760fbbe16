/**
 * Secrets we must be able to read back (webhook signing secrets: HMAC needs
 * the secret itself, a hash will not do) are stored sealed with AES-256-GCM
 * under a server key kept outside the data directory, so a copy of the log
 * or of the data directory does not give them away.
 * Sealed form: `v1.<iv>.<tag>.<ciphertext>`, each part base64url.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const KEY_BYTES = 32;
const IV_BYTES = 12;

export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static fromKey(key: Buffer): SecretBox {
    if (key.length !== KEY_BYTES) throw new RangeError(`the secret key must be ${KEY_BYTES} bytes (got ${key.length})`);
    return new SecretBox(key);
  }

  /** From `FLEET_SECRET_KEY` (base64), or a key file created (0600) with a random key when missing. */
  static load(source: { base64: string } | { file: string }): SecretBox {
    if ('base64' in source) return SecretBox.fromKey(Buffer.from(source.base64, 'base64'));
    if (!existsSync(source.file)) writeFileSync(source.file, randomBytes(KEY_BYTES).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    return SecretBox.fromKey(Buffer.from(readFileSync(source.file, 'utf8').trim(), 'base64'));
  }

  /**
   * A key of its own for another use of the server secret (`label` names the
   * use: HMAC keys of CSRF tokens), derived with HKDF so that no two uses ever
   * share key material with the one that seals.
   */
  derivedKey(label: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `fleet ${label}`, KEY_BYTES));
  }

  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), ciphertext].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  /** Throws when the sealed text was tampered with or sealed under another key. */
  open(sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== 'v1' || iv === undefined || tag === undefined || ciphertext === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }
}
