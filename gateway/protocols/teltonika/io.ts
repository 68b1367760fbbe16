/** IO element values: the `io<ID>` attribute keys and the readers of fixed-size values. */
import type { Reader } from '../../codec/reader.js';
import type { DecodedRecord } from '../../protocol.js';

export type Attributes = DecodedRecord['attributes'];

/**
 * `io<ID>`, built once per id so the hot path allocates no key strings. Allocated whole for every
 * 16-bit id: an array grown by a first write far past its end (id 10800 into an empty one) turns into
 * a hash table, and every lookup then hashed its id (docs/performance.md).
 */
const IO_KEYS: string[] = new Array<string>(0x1_0000).fill('');
export function ioKey(id: number): string {
  const key = IO_KEYS[id]!;
  return key !== '' ? key : (IO_KEYS[id] = `io${id}`);
}

export function readFixedValue(r: Reader, size: 1 | 2 | 4 | 8 | 16): number | string {
  switch (size) {
    case 1:
      return r.u8();
    case 2:
      return r.u16();
    case 4:
      return r.u32();
    case 8:
      return readU64Value(r);
    case 16:
      return r.bytes(16).toString('hex');
  }
}

/** Unsigned 64-bit IO value: a number while exact (< 2^53), else its decimal string. */
export function readU64Value(r: Reader): number | string {
  const high = r.u32();
  const low = r.u32();
  if (high < 0x20_0000) return high * 0x1_0000_0000 + low;
  return ((BigInt(high) << 32n) | BigInt(low)).toString();
}
