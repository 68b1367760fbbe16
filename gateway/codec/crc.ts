/** Checksums of the three protocols, table-driven for the hot path. */

function reflectedTable(poly: number): Uint16Array {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ poly : c >>> 1;
    table[i] = c;
  }
  return table;
}

const ARC_TABLE = reflectedTable(0xa001);
const X25_TABLE = reflectedTable(0x8408);

/** CRC-16/ARC (a.k.a. CRC-16/IBM): Teltonika AVL data field. */
export function crc16Arc(buf: Buffer, start = 0, end = buf.length): number {
  let crc = 0;
  for (let i = start; i < end; i++) crc = (crc >>> 8) ^ ARC_TABLE[(crc ^ buf[i]!) & 0xff]!;
  return crc;
}

/** CRC-16/X-25 (CRC-ITU as Concox calls it): GT06 length field through serial. */
export function crc16X25(buf: Buffer, start = 0, end = buf.length): number {
  let crc = 0xffff;
  for (let i = start; i < end; i++) crc = (crc >>> 8) ^ X25_TABLE[(crc ^ buf[i]!) & 0xff]!;
  return (crc ^ 0xffff) & 0xffff;
}

/** XOR of every byte: JT/T 808 check code. */
export function xor8(buf: Buffer, start = 0, end = buf.length): number {
  let x = 0;
  for (let i = start; i < end; i++) x ^= buf[i]!;
  return x;
}
