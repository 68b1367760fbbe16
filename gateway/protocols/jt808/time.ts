/** Device clocks: BCD times and the zone texts some terminals state (item 0xEB). */
import { bcdByte } from '../../codec/bcd.js';

/** The standard's zone (Beijing time), Traccar's default too: used when nothing else is known. */
export const DEFAULT_ZONE_MINUTES = 8 * 60;

/** BCD YYMMDDhhmmss at `at`, in a clock `zoneMinutes` east of UTC, as UTC ms; NaN when not a valid time. */
export function bcdTime(buf: Buffer, at: number, zoneMinutes: number): number {
  const year = bcdByte(buf[at]!);
  const month = bcdByte(buf[at + 1]!);
  const day = bcdByte(buf[at + 2]!);
  const hour = bcdByte(buf[at + 3]!);
  const minute = bcdByte(buf[at + 4]!);
  const second = bcdByte(buf[at + 5]!);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
    return NaN;
  }
  return dayStartMs(year, month, day) + ((hour * 60 + minute - zoneMinutes) * 60 + second) * 1000;
}

// Midnight UTC of the last date seen: consecutive reports share their date, and Date.UTC is slow.
let cachedDayKey = -1;
let cachedDayMs = 0;

function dayStartMs(year: number, month: number, day: number): number {
  const key = (year * 100 + month) * 100 + day;
  if (key !== cachedDayKey) {
    cachedDayMs = Date.UTC(2000 + year, month - 1, day);
    cachedDayKey = key;
  }
  return cachedDayMs;
}

const ZONE_TEXT = /^(?:UTC|GMT)([+-])(\d{1,2})(?::?(\d{2}))?$/;

/** Item 0xEB as a zone text like "UTC+08:00", or null when it is something else. */
export function zoneTextAt(buf: Buffer, v: number, length: number): string | null {
  if (length < 4 || length > 12) return null;
  const first = buf[v];
  if (first !== 0x55 && first !== 0x47) return null; // 'U' or 'G'
  const text = buf.toString('latin1', v, v + length);
  return ZONE_TEXT.test(text) ? text : null;
}

/** Minutes east of UTC of a zone text ("UTC-04:00" -> -240), or null. */
export function parseZoneText(text: string): number | null {
  const m = ZONE_TEXT.exec(text);
  if (m === null) return null;
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? 0);
  if (minutes > 14 * 60) return null;
  return m[1] === '-' ? -minutes : minutes;
}
