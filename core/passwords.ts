/**
 * Panel passwords: scrypt (node:crypto) with a random salt, the cost
 * parameters stored with the hash (`scrypt$<N>$<r>$<p>$<salt>$<hash>`, salt
 * and hash base64url), so the cost can be raised later without breaking the
 * hashes already stored. Checked in constant time.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** 32 MiB and ~50-100 ms a hash here: slow for a guesser, bearable for a login. */
const COST = { N: 2 ** 15, r: 8, p: 1 };
const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** scrypt needs 128 * N * r bytes; Node's default ceiling (32 MiB) is just too small for N = 2^15. */
const MAX_MEM = 64 * 1024 * 1024;

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, { ...options, maxmem: MAX_MEM }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** False for a wrong password and for a stored value that is not a hash of ours. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * A hash of a password nobody knows: a login for an unknown email is checked
 * against it, so it takes as long as one for a known email and answers the same.
 */
export function unknownUserHash(): Promise<string> {
  unknownHash ??= hashPassword(randomBytes(24).toString('base64url'));
  return unknownHash;
}
let unknownHash: Promise<string> | null = null;

/** A password for a new login, shown once: 144 random bits, 24 characters. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
