/** Packed BCD helpers (JT/T 808 times and terminal ids, GT06 login ids). */

/** Decimal digits of packed BCD bytes, e.g. 0x01 0x23 -> "0123". */
export function bcdDigits(buf: Buffer, start = 0, end = buf.length): string {
  let s = '';
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    s += String.fromCharCode(48 + (b >> 4), 48 + (b & 0x0f));
  }
  return s;
}

/** Packs a digit string into BCD, left-padding with zeros to `bytes` bytes. */
export function toBcd(digits: string, bytes: number): Buffer {
  const padded = digits.padStart(bytes * 2, '0').slice(-bytes * 2);
  const out = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) {
    out[i] = ((padded.charCodeAt(2 * i) - 48) << 4) | (padded.charCodeAt(2 * i + 1) - 48);
  }
  return out;
}

/** True when every nibble is a decimal digit. */
export function isBcd(buf: Buffer, start = 0, end = buf.length): boolean {
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    if (b >> 4 > 9 || (b & 0x0f) > 9) return false;
  }
  return true;
}

/** One BCD byte as 0-99, or -1 when a nibble is not a digit. */
export function bcdByte(b: number): number {
  const hi = b >> 4;
  const lo = b & 0x0f;
  return hi > 9 || lo > 9 ? -1 : hi * 10 + lo;
}
