/**
 * Pure decode of one Teltonika frame (see README.md): the IMEI packet, AVL packets of
 * codecs 8, 8E, 16 and 7 (GH3000), codec 12/13 messages, and the UDP datagram variant.
 * Everything is read straight from the Buffer through the bounds-checked Reader, so a
 * short or garbled frame surfaces as a DecodeError and never as garbage.
 */
import { crc16Arc } from '../../codec/crc.js';
import { DecodeError, Reader } from '../../codec/reader.js';
import { recordWithoutLocation, type Decoded, type DecodedRecord, type DeviceAlarm, type SessionInfo } from '../../protocol.js';
import { imeiAccepted, imeiRefused, recordCountAck, udpAck } from './ack.js';
import { AVL_OVERHEAD, KEEP_ALIVE, MIN_AVL_DATA_LENGTH } from './frame.js';

export const CODEC_GH3000 = 0x07;
export const CODEC_8 = 0x08;
export const CODEC_8E = 0x8e;
export const CODEC_12 = 0x0c;
export const CODEC_13 = 0x0d;
export const CODEC_16 = 0x10;

/** Record priority 2: the device flags the record as a panic event. */
const PRIORITY_PANIC = 2;
/** Codec 16 generation type 7: a periodic record, not triggered by its event IO. */
const GENERATION_PERIODIC = 7;
/** Codec 12 message type for camera file transfer (DualCam), driven by server chunk requests. */
const MESSAGE_CAMERA = 0x0d;
/** GH3000 times count seconds from 2007-01-01T00:00:00Z. */
const GH3000_EPOCH_MS = Date.UTC(2007, 0, 1);

export type Attributes = DecodedRecord['attributes'];

/** What a record decoder needs besides the bytes. */
interface RecordContext {
  /** Apply the FMB/FMC-family IO table (Eye sensor IOs); from the device model. */
  fmbIoTable: boolean;
  /** Time for messages that carry none (codec 12). */
  now: number;
}

export function decode(frame: Buffer, session: SessionInfo): Decoded {
  if (frame.length === 1 && frame[0] === KEEP_ALIVE) return { records: [], reply: null, ignoredReason: 'keep-alive byte' };
  if (frame.length < 2) throw new DecodeError('truncated', `frame of ${frame.length} byte(s)`);
  if (frame.readUInt16BE(0) !== 0) return decodeImeiPacket(frame);
  return decodeAvlPacket(frame, contextOf(session));
}

function contextOf(session: Pick<SessionInfo, 'model' | 'now'>): RecordContext {
  return { fmbIoTable: usesFmbIoTable(session.model), now: session.now };
}

/**
 * FMB/FMC/FMM/FMT/FMP/FTC/FTM/MTB units share one AVL ID table; older FM6xx/FM36/TAT
 * units reuse some ids for other things. Unknown models get raw `ioNNN` values only.
 */
export function usesFmbIoTable(model: string | null): boolean {
  return model !== null && /^(FM[BCMTPU]|FT[CM]|MTB)/i.test(model);
}

// ---------------------------------------------------------------------------
// IMEI packet

function decodeImeiPacket(frame: Buffer): Decoded {
  const length = frame.readUInt16BE(0);
  if (frame.length !== 2 + length) {
    throw new DecodeError('bad_length', `IMEI packet declares ${length} byte(s), carries ${frame.length - 2}`);
  }
  const imei = frame.toString('latin1', 2);
  // Refuse right away: a unit that sends no digits will not be registered under anything.
  if (!/^\d+$/.test(imei)) throw new DecodeError('malformed', 'IMEI packet holds non-digits', imeiRefused());
  return { identity: { imei }, records: [], reply: imeiAccepted(), refuse: imeiRefused() };
}

// ---------------------------------------------------------------------------
// AVL packet: preamble, length, data field, CRC

function decodeAvlPacket(frame: Buffer, ctx: RecordContext): Decoded {
  if (frame.length < AVL_OVERHEAD + MIN_AVL_DATA_LENGTH) {
    throw new DecodeError('bad_length', `AVL packet of ${frame.length} byte(s) is shorter than the smallest one`);
  }
  if (frame.readUInt32BE(0) !== 0) throw new DecodeError('malformed', 'non-zero AVL preamble');
  const dataLength = frame.readUInt32BE(4);
  if (frame.length !== dataLength + AVL_OVERHEAD) {
    throw new DecodeError('bad_length', `data length field ${dataLength}, frame carries ${frame.length - AVL_OVERHEAD} data byte(s)`);
  }
  const dataEnd = 8 + dataLength;
  // The CRC sits in the low half of a 4-byte field; a non-zero high half is a mismatch too.
  const crcField = frame.readUInt32BE(dataEnd);
  const crc = crc16Arc(frame, 8, dataEnd);
  if (crcField !== crc) {
    throw new DecodeError('bad_checksum', `CRC field ${crcField.toString(16)}, computed ${crc.toString(16)}`);
  }
  const data = decodeDataField(frame, 8, dataEnd, ctx);
  return toDecoded(data, data.acked ? recordCountAck(data.count) : null);
}

/** A decoded data field: codec id, N1, the records, and whether the device waits for a count ack. */
interface DataField {
  codec: number;
  count: number;
  records: DecodedRecord[];
  /** AVL codecs are acked with the record count; codec 12/13 messages are one-way. */
  acked: boolean;
  ignoredReason?: string;
}

function toDecoded(data: DataField, reply: Buffer | null): Decoded {
  const decoded: Decoded = { records: data.records, reply };
  if (data.ignoredReason !== undefined) decoded.ignoredReason = data.ignoredReason;
  return decoded;
}

/** codec id · N1 · records · N2, between `start` and `end` of `buf`. Shared by TCP and UDP. */
function decodeDataField(buf: Buffer, start: number, end: number, ctx: RecordContext): DataField {
  if (end - start < MIN_AVL_DATA_LENGTH) throw new DecodeError('truncated', 'data field shorter than codec id and counts');
  const codec = buf[start]!;
  const count = buf[start + 1]!;
  const trailerCount = buf[end - 1]!;
  if (count !== trailerCount) {
    throw new DecodeError('malformed', `record count ${count} in header, ${trailerCount} in trailer`);
  }
  const from = start + 2;
  const to = end - 1;
  switch (codec) {
    case CODEC_8:
      return { codec, count, acked: true, records: decodeAvlRecords(buf, from, to, count, CODEC8_LAYOUT, ctx) };
    case CODEC_8E:
      return { codec, count, acked: true, records: decodeAvlRecords(buf, from, to, count, CODEC8E_LAYOUT, ctx) };
    case CODEC_16:
      return { codec, count, acked: true, records: decodeAvlRecords(buf, from, to, count, CODEC16_LAYOUT, ctx) };
    case CODEC_GH3000:
      return { codec, count, acked: true, records: decodeGh3000Records(buf, from, to, count) };
    case CODEC_12:
    case CODEC_13:
      return decodeMessages(buf, from, to, count, codec, ctx);
    default:
      throw new DecodeError('unsupported', `codec 0x${codec.toString(16).padStart(2, '0')}`);
  }
}

/** Fails unless the records used up exactly the bytes between N1 and N2. */
function expectEnd(r: Reader, count: number): void {
  if (r.remaining !== 0) throw new DecodeError('malformed', `${r.remaining} byte(s) left over after ${count} record(s)`);
}

// ---------------------------------------------------------------------------
// Codecs 8, 8E, 16

/** How wide ids and counts are, per codec. */
interface IoLayout {
  wideIds: boolean;
  wideCounts: boolean;
  /** Codec 16: a generation-type byte after the event IO id. */
  generationType: boolean;
  /** Codec 8E: a group of variable-length values after the 8-byte group. */
  variableGroup: boolean;
}

const CODEC8_LAYOUT: IoLayout = { wideIds: false, wideCounts: false, generationType: false, variableGroup: false };
const CODEC8E_LAYOUT: IoLayout = { wideIds: true, wideCounts: true, generationType: false, variableGroup: true };
const CODEC16_LAYOUT: IoLayout = { wideIds: true, wideCounts: false, generationType: true, variableGroup: false };

/**
 * Reads `count` records. Some FMB configurations add a group of 16-byte values after the
 * 8-byte group; nothing in the packet says so, so when the plain layout does not fill the
 * data field exactly the 16-byte layout is tried before giving up. Only one of the two can
 * fit byte for byte.
 */
function decodeAvlRecords(buf: Buffer, from: number, to: number, count: number, layout: IoLayout, ctx: RecordContext): DecodedRecord[] {
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

/**
 * `io<ID>`, built once per id so the hot path allocates no key strings. Allocated whole for every
 * 16-bit id: an array grown by a first write far past its end (id 10800 into an empty one) turns into
 * a hash table, and every lookup then hashed its id (5% of the gateway's thread in the ingest bench).
 */
const IO_KEYS: string[] = new Array<string>(0x1_0000).fill('');
function ioKey(id: number): string {
  const key = IO_KEYS[id]!;
  return key !== '' ? key : (IO_KEYS[id] = `io${id}`);
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

function readFixedValue(r: Reader, size: 1 | 2 | 4 | 8 | 16): number | string {
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
function readU64Value(r: Reader): number | string {
  const high = r.u32();
  const low = r.u32();
  if (high < 0x20_0000) return high * 0x1_0000_0000 + low;
  return ((BigInt(high) << 32n) | BigInt(low)).toString();
}

/** BLE blobs whose TLV content we name (`tagN_…`); the raw blob stays as `ioNNN` hex. */
const BLE_TAG_BLOB_IDS = new Set([548, 10828, 10829, 10831, 11317]);

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

/**
 * BLE tag blob: a format byte (1), then per tag a length byte and that many bytes of
 * parameters, each `id u8 · length u8 · value`. Tags are numbered from 1 across every blob
 * of the record. A blob that does not parse adds nothing (its hex is kept anyway).
 * Returns the number of tags named so far.
 */
export function addBleTagValues(blob: Buffer, tagsBefore: number, attributes: Attributes): number {
  if (blob.length < 1 || blob[0] !== 0x01) return tagsBefore;
  const found: Attributes = {};
  let tag = tagsBefore;
  let at = 1;
  while (at < blob.length) {
    const entryEnd = at + 1 + blob[at]!;
    if (entryEnd > blob.length) return tagsBefore;
    tag += 1;
    for (let p = at + 1; p < entryEnd; ) {
      if (p + 2 > entryEnd) return tagsBefore;
      const valueEnd = p + 2 + blob[p + 1]!;
      if (valueEnd > entryEnd) return tagsBefore;
      addTagParameter(found, `tag${tag}_`, blob[p]!, blob.subarray(p + 2, valueEnd));
      p = valueEnd;
    }
    at = entryEnd;
  }
  Object.assign(attributes, found);
  return tag;
}

/** Parameter ids of a BLE tag entry; see README.md for the mapping. */
function addTagParameter(out: Attributes, prefix: string, id: number, value: Buffer): void {
  if (id === 0x00 && value.length === 1) out[`${prefix}rssi_dbm`] = value.readInt8(0);
  else if (id === 0x01) out[`${prefix}id`] = value.toString('hex');
  else if (id === 0x02) addEyeSensorPayload(out, prefix, value);
  else if (id === 0x0e && value.length === 2) out[`${prefix}battery_mv`] = value.readUInt16BE(0);
  else if (value.length >= 1 && value.length <= 4) out[`${prefix}param${id}`] = value.readUIntBE(0, value.length);
  else out[`${prefix}param${id}`] = value.toString('hex');
}

/**
 * Teltonika EYE sensor advertisement data from the flags byte on: each flag bit says which
 * field follows, in bit order. Bit 3 (magnet state) and bit 6 (low battery) carry no bytes.
 */
function addEyeSensorPayload(out: Attributes, prefix: string, value: Buffer): void {
  if (value.length < 1) return;
  const flags = value[0]!;
  const need = 1 + (flags & 0x01 ? 2 : 0) + (flags & 0x02 ? 1 : 0) + (flags & 0x10 ? 2 : 0) + (flags & 0x20 ? 3 : 0) + (flags & 0x80 ? 1 : 0);
  if (value.length < need) return;
  let at = 1;
  if (flags & 0x01) {
    out[`${prefix}temp_c`] = value.readInt16BE(at) / 100;
    at += 2;
  }
  if (flags & 0x02) out[`${prefix}humidity_pct`] = value[at++]!;
  if (flags & 0x04) out[`${prefix}magnet`] = (flags & 0x08) !== 0;
  if (flags & 0x10) {
    const movement = value.readUInt16BE(at);
    out[`${prefix}moving`] = (movement & 0x8000) !== 0;
    out[`${prefix}movement_count`] = movement & 0x7fff;
    at += 2;
  }
  if (flags & 0x20) {
    out[`${prefix}pitch_deg`] = value.readInt8(at);
    out[`${prefix}roll_deg`] = value.readInt16BE(at + 1);
    at += 3;
  }
  out[`${prefix}low_battery`] = (flags & 0x40) !== 0;
  if (flags & 0x80) out[`${prefix}voltage_mv`] = 2000 + value[at]! * 10;
}

/** FMB-family EYE sensor IOs: 10800-10803 temperature (signed, 0.01 °C), 10804-10807 humidity (%). */
function addEyeSensorValues(attributes: Attributes): void {
  for (let n = 0; n < 4; n++) {
    const temp = attributes[ioKey(10800 + n)];
    if (typeof temp === 'number') attributes[`eye_temp${n + 1}_c`] = ((temp << 16) >> 16) / 100;
    const humidity = attributes[ioKey(10804 + n)];
    if (typeof humidity === 'number') attributes[`eye_humidity${n + 1}_pct`] = humidity;
  }
}

/** IO 247 values that report the crash itself (6: newer firmware, uncalibrated unit); 2-5 mark crash-trace records, 0 the end. */
const CRASH_DETECTED = 1;
const CRASH_DETECTED_UNCALIBRATED = 6;

const GREEN_DRIVING_KINDS: Record<number, DeviceAlarm['kind']> = {
  1: 'event.acceleration',
  2: 'event.harsh_brake',
  3: 'event.curve',
};

/**
 * Alarms of a codec 8/8E/16 record. `eventIo` is 0 unless the record was generated by that
 * IO, so IOs that sit in every record (239 ignition) or linger (253, 255) raise nothing on
 * periodic records. Priority 2 (panic) is a per-record flag and raises SOS by itself.
 */
export function avlAlarms(priority: number, eventIo: number, a: Attributes): DeviceAlarm[] {
  const alarms: DeviceAlarm[] = [];
  if (priority === PRIORITY_PANIC || (eventIo === 236 && a.io236 === 1)) {
    alarms.push({ kind: 'event.sos', details: eventIo === 236 ? { priority, io236: 1 } : { priority } });
  }
  switch (eventIo) {
    case 253: {
      const kind = GREEN_DRIVING_KINDS[a.io253 as number];
      if (kind) alarms.push({ kind, details: detailsOf(a, 'io253', 'io254') });
      break;
    }
    case 255:
      if (typeof a.io255 === 'number') alarms.push({ kind: 'event.overspeed', details: detailsOf(a, 'io255') });
      break;
    case 239:
      if (typeof a.io239 === 'number') {
        alarms.push({ kind: a.io239 !== 0 ? 'event.ignition_on' : 'event.ignition_off', details: detailsOf(a, 'io239') });
      }
      break;
    case 247:
      if (a.io247 === CRASH_DETECTED || a.io247 === CRASH_DETECTED_UNCALIBRATED) {
        alarms.push({ kind: 'alarm.adas.collision', details: detailsOf(a, 'io247') });
      }
      break;
  }
  return alarms;
}

function detailsOf(a: Attributes, ...keys: string[]): Record<string, number | string> {
  const details: Record<string, number | string> = {};
  for (const key of keys) {
    const value = a[key];
    if (typeof value === 'number' || typeof value === 'string') details[key] = value;
  }
  return details;
}

// ---------------------------------------------------------------------------
// Codec 7 (GH3000): bit masks say which fields are present

function decodeGh3000Records(buf: Buffer, from: number, to: number, count: number): DecodedRecord[] {
  const r = new Reader(buf, from, to);
  const records: DecodedRecord[] = [];
  for (let i = 0; i < count; i++) records.push(readGh3000Record(r));
  expectEnd(r, count);
  return records;
}

function readGh3000Record(r: Reader): DecodedRecord {
  const start = r.offset;
  const stamp = r.u32();
  // Top 2 bits: priority; low 30 bits: seconds since 2007-01-01.
  const priority = stamp >>> 30;
  const fixTime = GH3000_EPOCH_MS + (stamp & 0x3fff_ffff) * 1000;
  const globalMask = r.u8();
  const attributes: Attributes = { priority };
  let lat: number | null = null;
  let lng: number | null = null;
  let altitudeM: number | null = null;
  let headingDeg: number | null = null;
  let speedKmh: number | null = null;
  let satellites: number | null = null;

  if (globalMask & 0x01) {
    const gpsMask = r.u8();
    if (gpsMask & 0x01) {
      const latitude = readFloat(r);
      const longitude = readFloat(r);
      if (Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180) {
        lat = latitude;
        lng = longitude;
      }
    }
    if (gpsMask & 0x02) altitudeM = r.i16();
    if (gpsMask & 0x04) headingDeg = (r.u8() * 360) / 256;
    if (gpsMask & 0x08) speedKmh = r.u8();
    if (gpsMask & 0x10) satellites = r.u8();
    if (gpsMask & 0x20) {
      attributes.cell_lac = r.u16();
      attributes.cell_id = r.u16();
    }
    if (gpsMask & 0x40) attributes.gsm_signal = r.u8();
    if (gpsMask & 0x80) attributes.operator_code = r.u32();
  }
  if (globalMask & 0x02) readGh3000Group(r, 1, attributes);
  if (globalMask & 0x04) readGh3000Group(r, 2, attributes);
  if (globalMask & 0x08) readGh3000Group(r, 4, attributes);

  // GH3000 IO 222 is its SOS button; it has no event IO field and its priorities differ from FMB's.
  const alarms: DeviceAlarm[] = attributes.io222 === 1 ? [{ kind: 'event.sos', details: { io222: 1 } }] : [];
  return {
    fixTime,
    valid: lat !== null && satellites !== null && satellites > 0,
    lat,
    lng,
    speedKmh,
    headingDeg,
    altitudeM,
    satellites,
    ignition: null,
    odometerM: null,
    alarms,
    attributes,
    raw: r.buf.subarray(start, r.offset),
  };
}

function readFloat(r: Reader): number {
  const at = r.offset;
  r.skip(4);
  return r.buf.readFloatBE(at);
}

function readGh3000Group(r: Reader, size: 1 | 2 | 4, attributes: Attributes): void {
  const count = r.u8();
  for (let i = 0; i < count; i++) {
    const id = r.u8();
    attributes[ioKey(id)] = readFixedValue(r, size);
  }
}

// ---------------------------------------------------------------------------
// Codec 12 / 13: messages (command replies, serial-port text, driver-card lines)

function decodeMessages(buf: Buffer, from: number, to: number, count: number, codec: number, ctx: RecordContext): DataField {
  const r = new Reader(buf, from, to);
  const records: DecodedRecord[] = [];
  let cameraChunks = 0;
  for (let i = 0; i < count; i++) {
    const start = r.offset;
    const type = r.u8();
    const payload = r.sub(r.u32());
    if (type === MESSAGE_CAMERA) {
      cameraChunks += 1;
      continue;
    }
    const fixTime = codec === CODEC_13 ? payload.u32() * 1000 : ctx.now;
    records.push(messageRecord(type, payload.bytes(payload.remaining), fixTime, r.buf.subarray(start, r.offset)));
  }
  expectEnd(r, count);
  const data: DataField = { codec, count, records, acked: false };
  if (records.length === 0) {
    data.ignoredReason = cameraChunks > 0 ? 'camera file transfer (codec 12 type 0x0d) is not supported' : 'empty message packet';
  }
  return data;
}

/** A message as a status record: no location, the text (or hex) in `result`. */
function messageRecord(type: number, body: Buffer, fixTime: number, raw: Buffer): DecodedRecord {
  const result = isPrintable(body) ? body.toString('latin1').trim() : body.toString('hex');
  const attributes: Attributes = { message_type: type, result };
  const driverId = driverCardId(result);
  if (driverId !== null) attributes.driver_unique_id = driverId;
  return recordWithoutLocation(fixTime, attributes, raw);
}

function isPrintable(body: Buffer): boolean {
  for (let i = 0; i < body.length; i++) {
    const b = body[i]!;
    if ((b < 0x20 || b > 0x7e) && b !== 0x0d && b !== 0x0a && b !== 0x09) return false;
  }
  return true;
}

/** Driver-card reader line `GTSL|type|…|…|<card id>|…`: the fifth field is the driver's id. */
function driverCardId(text: string): string | null {
  if (!text.startsWith('GTSL|')) return null;
  const id = text.split('|')[4];
  return id ? id : null;
}

// ---------------------------------------------------------------------------
// UDP

export interface UdpDecoded {
  imei: string;
  records: DecodedRecord[];
  /** The UDP ack (0005 · packet id · 01 · AVL packet id · count); null for one-way messages. */
  reply: Buffer | null;
  ignoredReason?: string;
}

/**
 * One UDP datagram: length u16 · packet id u16 · packet type u8 · AVL packet id u8 ·
 * IMEI length u16 · IMEI · data field. No preamble and no CRC (UDP has its own checksum).
 */
export function decodeUdp(datagram: Buffer, session: Pick<SessionInfo, 'model' | 'now'> = { model: null, now: Date.now() }): UdpDecoded {
  const r = new Reader(datagram);
  const length = r.u16();
  if (length !== datagram.length - 2) {
    throw new DecodeError('bad_length', `UDP length field ${length}, datagram carries ${datagram.length - 2} byte(s)`);
  }
  const packetId = r.u16();
  r.u8(); // "not usable byte" of the UDP channel header (0x01)
  const avlPacketId = r.u8();
  const imei = r.bytes(r.u16()).toString('latin1');
  if (!/^\d+$/.test(imei)) throw new DecodeError('malformed', 'UDP IMEI holds non-digits');
  const data = decodeDataField(datagram, r.offset, datagram.length, contextOf(session));
  const decoded: UdpDecoded = { imei, records: data.records, reply: data.acked ? udpAck(packetId, avlPacketId, data.count) : null };
  if (data.ignoredReason !== undefined) decoded.ignoredReason = data.ignoredReason;
  return decoded;
}
