/** Who a JT/T 808 frame comes from: the terminal id of its header (BCD, or a binary IMEI). */
import { bcdDigits, isBcd } from '../../codec/bcd.js';
import type { DeviceIdentity } from '../../protocol.js';
import { imeiFrom, normalizeTerminalId } from '../../../core/imei.js';

/**
 * The terminal id is BCD: its digits, leading zeros stripped, are the terminal id. Some
 * units put a binary IMEI (48-bit value) in the 6 id bytes instead: rebuild the 15-digit
 * IMEI. An all-zero id names nobody. `bytes[at, at + length)` are the id bytes.
 */
export function identityOf(bytes: Buffer, at: number, length: number): DeviceIdentity | undefined {
  if (sameIdBytes(bytes, at, length)) return cachedIdentity;
  const phone = bytes.subarray(at, at + length);
  let identity: DeviceIdentity | undefined;
  if (isBcd(phone)) {
    const terminalId = normalizeTerminalId(bcdDigits(phone));
    identity = terminalId === '' ? undefined : Object.freeze({ terminalId });
  } else if (length === 6) {
    identity = Object.freeze({ imei: imeiFromBinaryId(phone) });
  }
  cachedIdBytes = Buffer.from(phone);
  cachedIdentity = identity;
  return identity;
}

// The last id decoded: a connection sends the same id in every frame, so skip re-reading it.
let cachedIdBytes: Buffer = Buffer.alloc(0);
let cachedIdentity: DeviceIdentity | undefined;

function sameIdBytes(bytes: Buffer, at: number, length: number): boolean {
  if (cachedIdBytes.length !== length) return false;
  for (let i = 0; i < length; i++) if (bytes[at + i] !== cachedIdBytes[i]) return false;
  return true;
}

/** What the terminal is called in its registration reply's auth code: all id digits (or the rebuilt IMEI). */
export function terminalCode(phone: Buffer): string {
  if (isBcd(phone)) return bcdDigits(phone);
  return phone.length === 6 ? imeiFromBinaryId(phone) : phone.toString('hex');
}

/** 14 digits of the 48-bit value, then the Luhn check digit. */
export function imeiFromBinaryId(id: Buffer): string {
  return imeiFrom(String(id.readUIntBE(0, 6)).padStart(14, '0'));
}
