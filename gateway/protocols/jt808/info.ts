/** Uplinks logged as text, not stored: terminal attributes (0x0107) and waybills (0x0701). */
import { bcdDigits } from '../../codec/bcd.js';
import { Reader } from '../../codec/reader.js';
import type { Header } from './header.js';
import { asciiField, gbkText } from './text.js';

/** 0x0107 terminal attributes: type u16 · maker[5] · model[20|30] · terminal id[7|30] · ICCID BCD[10] · hw · fw · … */
export function terminalAttributesText(data: Buffer, at: number, end: number, h: Header): string {
  const wide = h.version !== null;
  const r = new Reader(data, at, end);
  try {
    r.skip(2 + 5 + (wide ? 30 : 20) + (wide ? 30 : 7));
    const iccid = bcdDigits(r.bytes(10));
    const hardware = asciiField(r.bytes(r.u8()));
    const firmware = asciiField(r.bytes(r.u8()));
    return `terminal attributes: ICCID ${iccid}, hardware ${hardware || '-'}, firmware ${firmware || '-'}`;
  } catch {
    return 'terminal attributes (layout not understood)';
  }
}

/** 0x0701: length u32 · content. */
export function waybillText(data: Buffer, at: number, end: number): string {
  if (end - at < 4) return '';
  const length = Math.min(data.readUInt32BE(at), end - at - 4);
  return gbkText(data, at + 4, at + 4 + length);
}
