/** AVL records of codecs 8, 8E and 16: fixed fields, then the IO element groups. */
import { DecodeError, Reader } from '../../codec/reader.js';
import type { DecodedRecord } from '../../protocol.js';
import { avlAlarms } from './alarms.js';
import { addBleTagValues, addEyeSensorValues, BLE_TAG_BLOB_IDS } from './io-tables.js';
import { ioKey, readFixedValue, type Attributes } from './io.js';
import { expectEnd, type RecordContext } from './records.js';

/** Codec 16 generation type 7: a periodic record, not triggered by its event IO. */
const GENERATION_PERIODIC = 7;

/** How wide ids and counts are, per codec. */
export interface IoLayout {
  wideIds: boolean;
  wideCounts: boolean;
  /** Codec 16: a generation-type byte after the event IO id. */
  generationType: boolean;
  /** Codec 8E: a group of variable-length values after the 8-byte group. */
  variableGroup: boolean;
}

export const CODEC8_LAYOUT: IoLayout = { wideIds: false, wideCounts: false, generationType: false, variableGroup: false };
export const CODEC8E_LAYOUT: IoLayout = { wideIds: true, wideCounts: true, generationType: false, variableGroup: true };
export const CODEC16_LAYOUT: IoLayout = { wideIds: true, wideCounts: false, generationType: true, variableGroup: false };

/**
 * Reads `count` records. Some FMB configurations add a group of 16-byte values after the
 * 8-byte group; nothing in the packet says so, so when the plain layout does not fill the
 * data field exactly the 16-byte layout is tried before giving up. Only one of the two can
 * fit byte for byte.
 */
export function decodeAvlRecords(buf: Buffer, from: number, to: number, count: number, layout: IoLayout, ctx: RecordContext): DecodedRecord[] {
  try {
    return readAvlRecords(buf, from, to, count, layout, false, ctx);
  } catch (plainError) {
    if (!(plainError instanceof DecodeError)) throw plainError;
    try {
      return readAvlRecords(buf, from, to, count, layout, true, ctx);
    } catch {
      throw plainError;
    }
  }
}

function readAvlRecords(
  buf: Buffer,
  from: number,
  to: number,
  count: number,
  layout: IoLayout,
  with16ByteGroup: boolean,
  ctx: RecordContext,
): DecodedRecord[] {
  const r = new Reader(buf, from, to);
  const records: DecodedRecord[] = [];
  for (let i = 0; i < count; i++) records.push(readAvlRecord(r, layout, with16ByteGroup, ctx));
  expectEnd(r, count);
  return records;
}

function readAvlRecord(r: Reader, layout: IoLayout, with16ByteGroup: boolean, ctx: RecordContext): DecodedRecord {
  const start = r.offset;
  const fixTime = r.u64();
  const priority = r.u8();
  const lngE7 = r.i32();
  const latE7 = r.i32();
  const altitudeM = r.i16();
  const headingDeg = r.u16();
  const satellites = r.u8();
  const speedKmh = r.u16();
  const eventIo = layout.wideIds ? r.u16() : r.u8();
  const generationType = layout.generationType ? r.u8() : -1;
  if (layout.wideCounts) r.u16();
  else r.u8(); // total IO count: redundant with the group counts, and not every firmware fills it right

  const attributes: Attributes = { priority, event_io: eventIo };
  if (generationType >= 0) attributes.generation_type = generationType;
  readFixedGroup(r, layout, 1, attributes);
  readFixedGroup(r, layout, 2, attributes);
  readFixedGroup(r, layout, 4, attributes);
  readFixedGroup(r, layout, 8, attributes);
  if (with16ByteGroup) readFixedGroup(r, layout, 16, attributes);
  if (layout.variableGroup) readVariableGroup(r, attributes);
  // The Eye sensor's ids (10800-10807) need two bytes, so a codec with one-byte ids never carries them.
  if (ctx.fmbIoTable && layout.wideIds) addEyeSensorValues(attributes);

  // A unit that never had a fix reports 0/0 with no satellites: that is no location at all.
  const located = latE7 !== 0 || lngE7 !== 0 || satellites !== 0;
  const ignition = attributes.io239;
  const odometer = attributes.io16;
  const triggered = eventIo !== 0 && generationType !== GENERATION_PERIODIC;
  return {
    fixTime,
    valid: located && satellites > 0,
    lat: located ? latE7 / 1e7 : null,
    lng: located ? lngE7 / 1e7 : null,
    speedKmh,
    headingDeg,
    altitudeM,
    satellites,
    ignition: typeof ignition === 'number' ? ignition !== 0 : null,
    odometerM: typeof odometer === 'number' ? odometer : null,
    alarms: avlAlarms(priority, triggered ? eventIo : 0, attributes),
    attributes,
    raw: r.buf.subarray(start, r.offset),
  };
}

/** One group of fixed-size values: count, then (id, value) pairs. */
function readFixedGroup(r: Reader, layout: IoLayout, size: 1 | 2 | 4 | 8 | 16, attributes: Attributes): void {
  const count = layout.wideCounts ? r.u16() : r.u8();
  for (let i = 0; i < count; i++) {
    const id = layout.wideIds ? r.u16() : r.u8();
    attributes[ioKey(id)] = readFixedValue(r, size);
  }
}

/** Codec 8E variable-length group: count u16, then (id u16, length u16, bytes) as lowercase hex. */
function readVariableGroup(r: Reader, attributes: Attributes): void {
  const count = r.u16();
  let tags = 0;
  for (let i = 0; i < count; i++) {
    const id = r.u16();
    const value = r.bytes(r.u16());
    attributes[ioKey(id)] = value.toString('hex');
    if (BLE_TAG_BLOB_IDS.has(id)) tags = addBleTagValues(value, tags, attributes);
  }
}
