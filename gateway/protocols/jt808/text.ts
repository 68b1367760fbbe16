/** Text fields of JT/T 808 bodies: GBK (the standard's charset), UTF-16BE, fixed-width ASCII. */
import { TextDecoder } from 'node:util';

let gbkDecoder: TextDecoder | null | undefined;

/** GBK text (the standard's charset); latin1 when the runtime has no GBK decoder. */
export function gbkText(buf: Buffer, start: number, end: number): string {
  if (gbkDecoder === undefined) {
    try {
      gbkDecoder = new TextDecoder('gbk');
    } catch {
      gbkDecoder = null;
    }
  }
  const bytes = buf.subarray(start, Math.max(start, end));
  return gbkDecoder === null ? bytes.toString('latin1') : gbkDecoder.decode(bytes);
}

/** UTF-16BE text (0x1300 replies). */
export function utf16beText(buf: Buffer, start: number, end: number): string {
  const length = Math.max(0, (end - start) & ~1);
  const swapped = Buffer.from(buf.subarray(start, start + length)).swap16();
  return swapped.toString('utf16le');
}

/** A fixed-width ASCII field, trailing NULs and spaces removed. */
export function asciiField(bytes: Buffer): string {
  return bytes.toString('latin1').replace(/[\0 ]+$/, '');
}
