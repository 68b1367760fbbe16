/** Text fields of JT/T 808 bodies: GBK (the standard's charset), UTF-16BE, fixed-width ASCII. */
import { TextDecoder } from 'node:util';

let gbkDecoder: TextDecoder | null | undefined;

function decoderOfGbk(): TextDecoder | null {
  if (gbkDecoder === undefined) {
    try {
      gbkDecoder = new TextDecoder('gbk');
    } catch {
      gbkDecoder = null;
    }
  }
  return gbkDecoder;
}

/** GBK text (the standard's charset); latin1 when the runtime has no GBK decoder. */
export function gbkText(buf: Buffer, start: number, end: number): string {
  const decoder = decoderOfGbk();
  const bytes = buf.subarray(start, Math.max(start, end));
  return decoder === null ? bytes.toString('latin1') : decoder.decode(bytes);
}

// Character -> its two GBK bytes, built once from the same decoder, so what we write reads back
// as we meant it. Node has no GBK encoder of its own.
let gbkCodes: Map<string, number> | null | undefined;

function gbkTable(): Map<string, number> | null {
  if (gbkCodes !== undefined) return gbkCodes;
  const decoder = decoderOfGbk();
  if (decoder === null) return (gbkCodes = null);
  const table = new Map<string, number>();
  const pair = Buffer.alloc(2);
  for (let lead = 0x81; lead <= 0xfe; lead++) {
    for (let trail = 0x40; trail <= 0xfe; trail++) {
      if (trail === 0x7f) continue;
      pair[0] = lead;
      pair[1] = trail;
      const char = decoder.decode(pair);
      if (char.length === 1 && char !== '\ufffd' && !table.has(char)) table.set(char, (lead << 8) | trail);
    }
  }
  return (gbkCodes = table);
}

/** `text` in GBK: ASCII as one byte, the rest as GBK pairs; null when a character has no GBK code. */
export function gbkBytes(text: string): Buffer | null {
  const out: number[] = [];
  let table: Map<string, number> | null | undefined;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code < 0x80) {
      out.push(code);
      continue;
    }
    table ??= gbkTable();
    const pair = table?.get(char);
    if (pair === undefined) return null;
    out.push(pair >> 8, pair & 0xff);
  }
  return Buffer.from(out);
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
