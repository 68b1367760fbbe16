/** Batches of location bodies: 0x0704 (standard) and vendor 0x0210. */
import { DecodeError, Reader } from '../../codec/reader.js';
import type { Decoded, DecodedRecord, DeviceIdentity, SessionInfo } from '../../protocol.js';
import { ignored, locationDecoded } from './decoded.js';
import { ack, type Header } from './header.js';
import { decodeLocation } from './location.js';

/** 0x0704: count u16 · type u8 (0 normal, 1 blind-area back-fill) · count × (length u16 · location body). */
export function decodeLocationBatch(data: Buffer, at: number, end: number, session: SessionInfo): DecodedRecord[] {
  const r = new Reader(data, at, end);
  const count = r.u16();
  const backfill = r.u8() === 1;
  const records: DecodedRecord[] = [];
  for (let i = 0; i < count; i++) {
    const length = r.u16();
    const from = r.offset;
    r.skip(length);
    const record = decodeLocation(data, from, from + length, session);
    if (backfill) record.attributes.backfill = true;
    records.push(record);
  }
  if (r.remaining !== 0) throw new DecodeError('malformed', `${r.remaining} byte(s) after ${count} batch entries`);
  return records;
}

/** Vendor 0x0210: (length u8 · location body) repeated; a 7-byte body is a battery/time status instead. */
export function decodeVendorBatch(data: Buffer, h: Header, end: number, identity: DeviceIdentity | undefined, session: SessionInfo): Decoded {
  if (end - h.bodyStart === 7) return ignored(identity, ack(h, session), 'vendor 0x0210 battery status (not stored)');
  const r = new Reader(data, h.bodyStart, end);
  const records: DecodedRecord[] = [];
  while (r.remaining > 0) {
    const length = r.u8();
    const from = r.offset;
    r.skip(length);
    records.push(decodeLocation(data, from, from + length, session));
  }
  return locationDecoded(identity, records, ack(h, session));
}
