/**
 * Pure decode of one JT/T 808 frame (see README.md): unescape, check code, body length,
 * the 2011/2013 and 2019 headers, then the message. Locations (0x0200, 0x0201, 0x0704,
 * vendor 0x0210) become records in our units; registration, authentication, heartbeat
 * and the rest get the reply the terminal waits for. The hot path (0x0200) reads straight
 * from the Buffer: no copy unless the frame holds a 7D, no per-field allocation.
 */
import { TextDecoder } from 'node:util';
import { bcdDigits, isBcd } from '../../codec/bcd.js';
import { xor8 } from '../../codec/crc.js';
import { DecodeError, Reader } from '../../codec/reader.js';
import { recordWithoutLocation, type Decoded, type DecodedRecord, type DeviceAlarm, type DeviceIdentity, type SessionInfo } from '../../protocol.js';
import type { DeviceAlarmKind } from '../../../core/alarms.js';
import { imeiFrom, normalizeTerminalId } from '../../../core/imei.js';
import {
  REGISTER_OK,
  REGISTER_TERMINAL_UNKNOWN,
  RESULT_FAILED,
  RESULT_MESSAGE_ERROR,
  RESULT_OK,
  RESULT_UNSUPPORTED,
  generalResponse,
  registerResponse,
  type ReplyTarget,
} from './ack.js';
import { DELIMITER, ESCAPE, TEXT_CLOSE, TEXT_OPEN, unescapeContent } from './frame.js';

export const MSG_TERMINAL_RESPONSE = 0x0001;
export const MSG_HEARTBEAT = 0x0002;
export const MSG_LOGOUT = 0x0003;
export const MSG_REGISTER = 0x0100;
export const MSG_AUTH = 0x0102;
export const MSG_TERMINAL_ATTRIBUTES = 0x0107;
export const MSG_LOCATION = 0x0200;
export const MSG_LOCATION_QUERY_RESPONSE = 0x0201;
export const MSG_VENDOR_BATCH = 0x0210;
export const MSG_WAYBILL = 0x0701;
export const MSG_DRIVER_IDENTITY = 0x0702;
export const MSG_LOCATION_BATCH = 0x0704;
export const MSG_TRANSPARENT = 0x0900;
export const MSG_TIMEZONE_SYNC = 0x1007;
export const MSG_TEXT_REPLY = 0x1300;
export const MSG_ACCELERATION = 0x2070;
export const MSG_LOCK_LOCATION = 0x5501;
export const MSG_LOCK_BLIND_LOCATION = 0x5502;
export const MSG_TEXT_REPORT = 0x6006;

const PROPS_BODY_LENGTH = 0x03ff;
const PROPS_ENCRYPTION = 0x1c00;
const PROPS_SUBPACKAGED = 0x2000;
const PROPS_VERSION_2019 = 0x4000;

/** The standard's zone (Beijing time), Traccar's default too: used when nothing else is known. */
export const DEFAULT_ZONE_MINUTES = 8 * 60;

/** alarm flags · status · lat · lng · altitude · speed · direction · BCD time. */
export const LOCATION_FIXED_BYTES = 28;

/** Models whose alarm bits do not follow the standard (padlocks, AOVX asset trackers). */
const OWN_ALARM_BIT_MODELS = new Set(['G-360P', 'G-508P', 'AL300', 'GL100']);

/**
 * Models known to reuse items 0x64-0x70 for lock/seal data: never read as active safety
 * even when an item happens to have the right length (see README.md).
 */
const NOT_ACTIVE_SAFETY_MODELS = new Set(['G-360P', 'G-508P']);

type Attributes = DecodedRecord['attributes'];

/** The header fields every handler needs; also the target of replies (terminal id + version as received). */
interface Header extends ReplyTarget {
  msgId: number;
  props: number;
  serial: number;
  /** 0 when the message is not subpackaged. */
  packetCount: number;
  packetIndex: number;
  bodyStart: number;
}

// ---------------------------------------------------------------------------
// Frame -> header -> message

export function decode(frame: Buffer, session: SessionInfo): Decoded {
  if (frame.length > 0 && frame[0] === TEXT_OPEN) return decodeTextSentence(frame, session);
  const last = frame.length - 1;
  if (last < 1 || frame[0] !== DELIMITER || frame[last] !== DELIMITER) {
    throw new DecodeError('malformed', 'not a 7E-delimited frame');
  }
  // One pass: XOR of the whole content (0 when the check code is right), stopping at an escape.
  let xorAll = 0;
  for (let i = 1; i < last; i++) {
    const b = frame[i]!;
    if (b === ESCAPE || b === DELIMITER) {
      const content = unescapeContent(frame);
      return decodeContent(content, 0, content.length, xor8(content), session);
    }
    xorAll ^= b;
  }
  // Nothing escaped (the common case): decode in place.
  return decodeContent(frame, 1, last, xorAll, session);
}

/** `data[start, end)` is the de-escaped content: header, body, check code; `xorAll` is the XOR of all of it. */
function decodeContent(data: Buffer, start: number, end: number, xorAll: number, session: SessionInfo): Decoded {
  const checkAt = end - 1;
  const h = readHeader(data, start, checkAt);
  if (xorAll !== 0) {
    throw new DecodeError(
      'bad_checksum',
      `check code ${hex2(data[checkAt]!)}, computed ${hex2(xor8(data, start, checkAt))}`,
      messageErrorReply(h, session),
    );
  }
  const bodyLength = checkAt - h.bodyStart;
  if ((h.props & PROPS_BODY_LENGTH) !== bodyLength) {
    throw new DecodeError(
      'bad_length',
      `body length field ${h.props & PROPS_BODY_LENGTH}, body has ${bodyLength} byte(s)`,
      messageErrorReply(h, session),
    );
  }
  try {
    return decodeMessage(data, h, checkAt, session);
  } catch (err) {
    // The check code was right, so the terminal sent this: tell it the message is wrong.
    if (err instanceof DecodeError && err.reply === null) throw new DecodeError(err.code, err.message, messageErrorReply(h, session));
    throw err;
  }
}

/** Vendor e-lock messages 0x5501/0x5502 carry a 1-byte serial and misuse the props bits. */
function isLockVendorMessage(msgId: number): boolean {
  return msgId === MSG_LOCK_LOCATION || msgId === MSG_LOCK_BLIND_LOCATION;
}

/** Header of the content starting at `start`; the body ends where the check code is (`checkAt`). */
function readHeader(data: Buffer, start: number, checkAt: number): Header {
  if (checkAt - start < 4) throw new DecodeError('truncated', `content of ${checkAt + 1 - start} byte(s) holds no header`);
  const msgId = u16(data, start);
  const props = u16(data, start + 2);
  const lockVendor = isLockVendorMessage(msgId);
  const subpackaged = !lockVendor && (props & PROPS_SUBPACKAGED) !== 0;
  const is2019 = !lockVendor && (props & PROPS_VERSION_2019) !== 0 && !only2013Fits(props, checkAt - start, subpackaged);
  let at = start + 4;
  const phoneLength = is2019 ? 10 : 6;
  const headerEnd = at + (is2019 ? 1 : 0) + phoneLength + (lockVendor ? 1 : 2) + (subpackaged ? 4 : 0);
  if (headerEnd > checkAt) {
    throw new DecodeError('truncated', `header of message ${hex4(msgId)} needs ${headerEnd - start} byte(s), content has ${checkAt - start}`);
  }
  const version = is2019 ? data[at++]! : null;
  const phoneAt = at;
  at += phoneLength;
  const serial = lockVendor ? data[at++]! : u16(data, at);
  if (!lockVendor) at += 2;
  let packetCount = 0;
  let packetIndex = 0;
  if (subpackaged) {
    packetCount = u16(data, at);
    packetIndex = u16(data, at + 2);
    at += 4;
  }
  return { msgId, props, serial, bytes: data, phoneAt, phoneLength, version, packetCount, packetIndex, bodyStart: at };
}

/** Header bytes before the body: id, props, [version,] phone, serial, [packet count and index]. */
const HEADER_2013_BYTES = 2 + 2 + 6 + 2;
const HEADER_2019_BYTES = 2 + 2 + 1 + 10 + 2;
const SUBPACKAGE_BYTES = 4;

/**
 * Some terminals set the 2019 version bit but send a 2013 header (6-byte id, no version
 * byte). Their declared body length then fits the content only with the 2013 header: taken
 * as 2013 rather than refused forever with "message error". A content that fits the 2019
 * header (or neither) keeps the bit's meaning.
 */
function only2013Fits(props: number, contentBytes: number, subpackaged: boolean): boolean {
  const body = props & PROPS_BODY_LENGTH;
  const extra = subpackaged ? SUBPACKAGE_BYTES : 0;
  return contentBytes === HEADER_2013_BYTES + extra + body && contentBytes !== HEADER_2019_BYTES + extra + body;
}

/** The server's serial for replies: the connection's frame counter. */
function serverSerial(session: SessionInfo): number {
  return session.frameIndex & 0xffff;
}

function ack(h: Header, session: SessionInfo, result = RESULT_OK): Buffer {
  return generalResponse(h, serverSerial(session), h.serial, h.msgId, result);
}

/** 0x8001 "message error" for a refused frame; none for the vendor lock messages (they use 0x4401). */
function messageErrorReply(h: Header, session: SessionInfo): Buffer | null {
  return isLockVendorMessage(h.msgId) ? null : ack(h, session, RESULT_MESSAGE_ERROR);
}

function decodeMessage(data: Buffer, h: Header, end: number, session: SessionInfo): Decoded {
  const identity = identityOf(data, h.phoneAt, h.phoneLength);
  const at = h.bodyStart;
  if (h.packetCount > 0) {
    return withIdentity(identity, {
      records: [],
      reply: ack(h, session, RESULT_UNSUPPORTED),
      ignoredReason: `packet ${h.packetIndex}/${h.packetCount} of message ${hex4(h.msgId)}: reassembly not supported`,
    });
  }
  if (!isLockVendorMessage(h.msgId) && (h.props & PROPS_ENCRYPTION) !== 0) {
    return withIdentity(identity, { records: [], reply: ack(h, session, RESULT_UNSUPPORTED), ignoredReason: 'encrypted body' });
  }
  switch (h.msgId) {
    case MSG_LOCATION:
      return locationDecoded(identity, [decodeLocation(data, at, end, session)], ack(h, session));
    case MSG_LOCATION_BATCH:
      return locationDecoded(identity, decodeLocationBatch(data, at, end, session), ack(h, session));
    case MSG_LOCATION_QUERY_RESPONSE:
      // An answer to our 0x8201: reply serial, then a location body; answers are not acked.
      if (end - at < 2) throw new DecodeError('truncated', 'location query response without a reply serial');
      return locationDecoded(identity, [decodeLocation(data, at + 2, end, session)], null);
    case MSG_VENDOR_BATCH:
      return decodeVendorBatch(data, h, end, identity, session);
    case MSG_HEARTBEAT:
    case MSG_LOGOUT:
      return withIdentity(identity, { records: [], reply: ack(h, session) });
    case MSG_TERMINAL_RESPONSE:
      return withIdentity(identity, { records: [], reply: null });
    case MSG_REGISTER:
      return withIdentity(identity, {
        records: [],
        reply: registerResponse(h, serverSerial(session), h.serial, REGISTER_OK, terminalCode(data.subarray(h.phoneAt, h.phoneAt + h.phoneLength))),
        refuse: registerResponse(h, serverSerial(session), h.serial, REGISTER_TERMINAL_UNKNOWN, ''),
      });
    case MSG_AUTH:
      return withIdentity(authIdentity(identity, data, h, end), {
        records: [],
        reply: ack(h, session),
        refuse: ack(h, session, RESULT_FAILED),
      });
    case MSG_DRIVER_IDENTITY:
      return withIdentity(identity, { records: [decodeDriverIdentity(data, at, end, h, session)], reply: ack(h, session) });
    case MSG_TEXT_REPORT:
      return ignored(identity, ack(h, session), `text report: ${gbkText(data, at + 1, end)}`);
    case MSG_TEXT_REPLY:
      return ignored(identity, ack(h, session), `text reply: ${utf16beText(data, at + 2, end).trim()}`);
    case MSG_WAYBILL:
      return ignored(identity, ack(h, session), `waybill/command reply: ${waybillText(data, at, end)}`);
    case MSG_TERMINAL_ATTRIBUTES:
      return ignored(identity, ack(h, session), terminalAttributesText(data, at, end, h));
    case MSG_TRANSPARENT:
      return ignored(
        identity,
        ack(h, session),
        `transparent data${end > at ? ` type 0x${hex2(data[at]!)}` : ''} (vendor payload, not interpreted)`,
      );
    case MSG_ACCELERATION:
      return ignored(identity, ack(h, session), 'accelerometer samples (vendor 0x2070, not stored)');
    case MSG_TIMEZONE_SYNC:
      return ignored(identity, ack(h, session), 'timezone sync (vendor 0x1007)');
    case MSG_LOCK_LOCATION:
    case MSG_LOCK_BLIND_LOCATION:
      // Not acked: the unit keeps these positions until a decoder for its layout exists.
      return ignored(identity, null, `vendor e-lock location ${hex4(h.msgId)}: layout not supported, not acknowledged`);
    default:
      return ignored(identity, ack(h, session, RESULT_UNSUPPORTED), `unsupported message ${hex4(h.msgId)}`);
  }
}

function withIdentity(identity: DeviceIdentity | undefined, decoded: Decoded): Decoded {
  if (identity !== undefined) decoded.identity = identity;
  return decoded;
}

function ignored(identity: DeviceIdentity | undefined, reply: Buffer | null, reason: string): Decoded {
  return withIdentity(identity, { records: [], reply, ignoredReason: reason });
}

/** Location frames: announce a zone the terminal stated in item 0xEB (applies to later frames). */
function locationDecoded(identity: DeviceIdentity | undefined, records: DecodedRecord[], reply: Buffer | null): Decoded {
  const decoded: Decoded = { records, reply };
  if (identity !== undefined) decoded.identity = identity;
  const zoneText = records.length > 0 ? records[records.length - 1]!.attributes.timezone : undefined;
  if (typeof zoneText === 'string') {
    const minutes = parseZoneText(zoneText);
    if (minutes !== null) decoded.announcedTimezoneMinutes = minutes;
  }
  return decoded;
}

// ---------------------------------------------------------------------------
// Terminal identity

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

/** 2019 authentication carries the IMEI after the auth code: code length u8 · code · IMEI[15] · firmware[20]. */
function authIdentity(identity: DeviceIdentity | undefined, data: Buffer, h: Header, end: number): DeviceIdentity | undefined {
  if (h.version === null) return identity;
  const codeLength = data[h.bodyStart];
  if (codeLength === undefined) return identity;
  const imeiAt = h.bodyStart + 1 + codeLength;
  if (imeiAt + 15 > end) return identity;
  const imei = data.toString('latin1', imeiAt, imeiAt + 15);
  return /^\d{15}$/.test(imei) ? { ...identity, imei } : identity;
}

// ---------------------------------------------------------------------------
// Location report body (0x0200 and inside 0x0704 / 0x0201 / 0x0210)

/** One location body `buf[start, end)` as a record in our units. */
export function decodeLocation(buf: Buffer, start: number, end: number, session: SessionInfo): DecodedRecord {
  if (end - start < LOCATION_FIXED_BYTES) {
    throw new DecodeError('truncated', `location body of ${end - start} byte(s), needs ${LOCATION_FIXED_BYTES}`);
  }
  const alarmFlags = u32(buf, start);
  const status = u32(buf, start + 4);
  const latRaw = u32(buf, start + 8);
  const lngRaw = u32(buf, start + 12);
  const valid = (status & 0x02) !== 0;
  // No fix and 0/0: the terminal has no location to report, not a point in the Gulf of Guinea.
  const located = valid || latRaw !== 0 || lngRaw !== 0;
  const record: DecodedRecord = {
    fixTime: 0,
    valid,
    lat: located ? ((status & 0x04) !== 0 && latRaw !== 0 ? -latRaw : latRaw) / 1e6 : null,
    lng: located ? ((status & 0x08) !== 0 && lngRaw !== 0 ? -lngRaw : lngRaw) / 1e6 : null,
    altitudeM: (u16(buf, start + 16) << 16) >> 16,
    speedKmh: u16(buf, start + 18) / 10,
    headingDeg: u16(buf, start + 20),
    satellites: null,
    ignition: (status & 0x01) !== 0,
    odometerM: null,
    alarms: [],
    attributes: { alarm_flags: alarmFlags, status_flags: status },
    raw: buf.subarray(start, end),
  };
  if (alarmFlags !== 0) addAlarmBits(record, alarmFlags, session.model);
  if (end > start + LOCATION_FIXED_BYTES) decodeItems(buf, start + LOCATION_FIXED_BYTES, end, record, session);
  const zoneText = record.attributes.timezone;
  const zone = (typeof zoneText === 'string' ? parseZoneText(zoneText) : null) ?? session.timezoneMinutes ?? DEFAULT_ZONE_MINUTES;
  const fixTime = bcdTime(buf, start + 22, zone);
  if (Number.isNaN(fixTime)) {
    // A garbled clock must not stall the terminal's queue: keep the record at arrival time.
    record.fixTime = session.now;
    record.valid = false;
    record.attributes.device_time_invalid = buf.toString('hex', start + 22, start + 28);
  } else {
    record.fixTime = fixTime;
  }
  return record;
}

/** Alarm bits 0-2 are the standard's SOS, overspeed and fatigue; 29/30 are crash/rollover (kept as attributes). */
function addAlarmBits(record: DecodedRecord, flags: number, model: string | null): void {
  if (model !== null && OWN_ALARM_BIT_MODELS.has(model)) return;
  if ((flags & 0x01) !== 0) addAlarm(record, { kind: 'event.sos' });
  if ((flags & 0x02) !== 0) addAlarm(record, { kind: 'event.overspeed' });
  if ((flags & 0x04) !== 0) addAlarm(record, { kind: 'alarm.dsm.fatigue' });
  if ((flags & (1 << 29)) !== 0) record.attributes.collision_warning = true;
  if ((flags & (1 << 30)) !== 0) record.attributes.rollover_warning = true;
}

/** One alarm per kind per record; a detailed one (active-safety item) replaces a bare alarm bit. */
function addAlarm(record: DecodedRecord, alarm: DeviceAlarm): void {
  const alarms = record.alarms;
  for (let i = 0; i < alarms.length; i++) {
    if (alarms[i]!.kind !== alarm.kind) continue;
    if (alarms[i]!.details === undefined && alarm.details !== undefined) alarms[i] = alarm;
    return;
  }
  alarms.push(alarm);
}

/** `item_0xNN` keys, built once. */
const ITEM_KEYS = Array.from({ length: 256 }, (_, id) => `item_0x${id.toString(16).padStart(2, '0')}`);

/** Additional items `id u8 · length u8 · value`, from `at` to `end`. */
function decodeItems(buf: Buffer, at: number, end: number, record: DecodedRecord, session: SessionInfo): void {
  const attributes = record.attributes;
  if (!itemsFillExactly(buf, at, end)) {
    // A vendor layout without TLVs (e.g. some 46-byte bodies): keep the fixed part; the bytes stay in `raw`.
    attributes.items_unparsed = buf.toString('hex', at, end);
    return;
  }
  while (at < end) {
    const id = buf[at]!;
    const length = buf[at + 1]!;
    const v = at + 2;
    if (!decodeStandardItem(buf, id, v, length, record, session)) attributes[ITEM_KEYS[id]!] = buf.toString('hex', v, v + length);
    at = v + length;
  }
}

/** True when the item lengths chain from `at` exactly to `end`. */
function itemsFillExactly(buf: Buffer, at: number, end: number): boolean {
  while (at + 2 <= end) at += 2 + buf[at + 1]!;
  return at === end;
}

/** Decodes a standard (or active-safety) item into `record`; false when it is not one we understand. */
function decodeStandardItem(buf: Buffer, id: number, v: number, length: number, record: DecodedRecord, session: SessionInfo): boolean {
  const attributes = record.attributes;
  switch (id) {
    case 0x01: // odometer, 0.1 km
      if (length !== 4) return false;
      record.odometerM = u32(buf, v) * 100;
      return true;
    case 0x02: // fuel, 0.1 L
      if (length !== 2) return false;
      attributes.fuel_l = buf.readUInt16BE(v) / 10;
      return true;
    case 0x03: // tachograph speed, 0.1 km/h
      if (length !== 2) return false;
      attributes.tachograph_speed_kmh = buf.readUInt16BE(v) / 10;
      return true;
    case 0x04: // id of an alarm event that needs manual confirmation
      if (length !== 2) return false;
      attributes.alarm_event_id = buf.readUInt16BE(v);
      return true;
    case 0x11: // overspeed detail: location type [+ area id]
      if (length !== 1 && length !== 5) return false;
      attributes.overspeed_location_type = buf[v]!;
      if (length === 5) attributes.overspeed_area_id = buf.readUInt32BE(v + 1);
      return true;
    case 0x12: // area/route in-out: location type, area id, direction
      if (length !== 6) return false;
      attributes.area_location_type = buf[v]!;
      attributes.area_id = buf.readUInt32BE(v + 1);
      attributes.area_direction = buf[v + 5] === 0 ? 'in' : 'out';
      return true;
    case 0x13: // route section drive time: section id, seconds, 0 too short / 1 too long
      if (length !== 7) return false;
      attributes.route_section_id = buf.readUInt32BE(v);
      attributes.route_drive_time_s = buf.readUInt16BE(v + 4);
      attributes.route_time_result = buf[v + 6] === 0 ? 'short' : 'long';
      return true;
    case 0x14: // JT/T 1078 video alarm bits
      if (length !== 4) return false;
      attributes.video_alarm = buf.readUInt32BE(v);
      return true;
    case 0x15: // video signal loss, channel bits
      if (length !== 4) return false;
      attributes.video_signal_loss = buf.readUInt32BE(v);
      return true;
    case 0x16: // video occlusion, channel bits
      if (length !== 4) return false;
      attributes.video_occlusion = buf.readUInt32BE(v);
      return true;
    case 0x17: // storage fault bits
      if (length !== 2) return false;
      attributes.storage_fault = buf.readUInt16BE(v);
      return true;
    case 0x18: // abnormal driving behaviour
      if (length !== 2 && length !== 3) return false;
      decodeAbnormalDriving(buf, v, length, record);
      return true;
    case 0x25: // extended vehicle signal bits
      if (length !== 4) return false;
      attributes.vehicle_signals = buf.readUInt32BE(v);
      return true;
    case 0x2a: // IO status bits
      if (length !== 2) return false;
      attributes.io_status = buf.readUInt16BE(v);
      return true;
    case 0x2b: // analog: AD0 in the low 16 bits, AD1 in the high
      if (length !== 4) return false;
      attributes.analog_0 = buf.readUInt16BE(v + 2);
      attributes.analog_1 = buf.readUInt16BE(v);
      return true;
    case 0x30:
      if (length !== 1) return false;
      attributes.rssi = buf[v]!;
      return true;
    case 0x31:
      if (length !== 1) return false;
      record.satellites = buf[v]!;
      return true;
    case 0x64:
    case 0x65:
    case 0x67:
    case 0x70:
      return decodeActiveSafetyItem(buf, id, v, length, record, session.model);
    case 0xeb: {
      // Some units state the zone of their clock here ("UTC+08:00"); others pack vendor TLVs.
      const text = zoneTextAt(buf, v, length);
      if (text === null) return false;
      attributes.timezone = text;
      return true;
    }
    default:
      return false;
  }
}

/** JT/T 1078 item 0x18: u16 bits (0 fatigue, 1 phone call, 2 smoking) [+ fatigue level u8]. */
function decodeAbnormalDriving(buf: Buffer, v: number, length: number, record: DecodedRecord): void {
  const bits = buf.readUInt16BE(v);
  record.attributes.abnormal_driving = bits;
  const level = length === 3 ? buf[v + 2]! : undefined;
  if (level !== undefined) record.attributes.fatigue_level = level;
  const details = { item: '0x18', abnormal_driving: bits };
  if ((bits & 0x01) !== 0) addAlarm(record, level === undefined ? { kind: 'alarm.dsm.fatigue', details } : { kind: 'alarm.dsm.fatigue', level, details });
  if ((bits & 0x02) !== 0) addAlarm(record, { kind: 'alarm.dsm.phone', details });
}

// ---------------------------------------------------------------------------
// Active safety (Jiangsu/Guangdong): 0x64 ADAS, 0x65 DSM, 0x67 BSD, 0x70 aggressive driving

/** Where the common fields sit in each active-safety item (offsets into the value). */
interface SafetyLayout {
  prefix: string;
  length: number;
  /** Offset of the alarm level byte, or -1 when the item has none. */
  level: number;
  time: number;
  label: number;
  kinds: Partial<Record<number, DeviceAlarmKind>>;
}

/** 47 bytes: id u32 · flag · type · 6 type-specific bytes · speed · altitude u16 · lat · lng · BCD time · status u16 · label[16]. */
const SAFETY_LAYOUTS: Partial<Record<number, SafetyLayout>> = {
  0x64: { prefix: 'adas', length: 47, level: 6, time: 23, label: 31, kinds: { 0x01: 'alarm.adas.collision', 0x02: 'alarm.adas.lane_departure' } },
  0x65: { prefix: 'dsm', length: 47, level: 6, time: 23, label: 31, kinds: { 0x01: 'alarm.dsm.fatigue', 0x02: 'alarm.dsm.phone' } },
  // BSD has no level and no type-specific bytes: id · flag · type · speed · altitude · lat · lng · time · status · label = 41.
  0x67: { prefix: 'bsd', length: 41, level: -1, time: 17, label: 25, kinds: { 0x01: 'alarm.bsd', 0x02: 'alarm.bsd', 0x03: 'alarm.bsd' } },
  0x70: { prefix: 'driving', length: 47, level: -1, time: 23, label: 31, kinds: { 0x01: 'event.acceleration', 0x02: 'event.harsh_brake', 0x03: 'event.curve' } },
};

/** Alarm flag: 0 not applicable (one-shot event), 1 start, 2 end. */
const FLAG_END = 2;

/**
 * E-seal and lock vendors reuse ids 0x60-0x71 for their own data. An item is read as active
 * safety only when it has exactly the standard length, a flag of 0-2, a valid BCD time where
 * the standard puts it, and the model is not a known lock.
 */
export function isActiveSafetyItem(buf: Buffer, id: number, v: number, length: number, model: string | null): boolean {
  const layout = SAFETY_LAYOUTS[id];
  if (layout === undefined || length !== layout.length) return false;
  if (model !== null && NOT_ACTIVE_SAFETY_MODELS.has(model)) return false;
  if (buf[v + 4]! > FLAG_END) return false;
  return !Number.isNaN(bcdTime(buf, v + layout.time, 0));
}

function decodeActiveSafetyItem(buf: Buffer, id: number, v: number, length: number, record: DecodedRecord, model: string | null): boolean {
  if (!isActiveSafetyItem(buf, id, v, length, model)) return false;
  const layout = SAFETY_LAYOUTS[id]!;
  const alarmId = buf.readUInt32BE(v);
  const flag = buf[v + 4]!;
  const type = buf[v + 5]!;
  const label = buf.toString('hex', v + layout.label, v + layout.label + 16);
  const p = layout.prefix;
  const attributes = record.attributes;
  attributes[`${p}_alarm_id`] = alarmId;
  attributes[`${p}_alarm_flag`] = flag;
  attributes[`${p}_alarm_type`] = type;
  attributes[`${p}_alarm_label`] = label;
  const level = layout.level >= 0 ? buf[v + layout.level]! : undefined;
  if (level !== undefined) attributes[`${p}_alarm_level`] = level;

  const kind = layout.kinds[type];
  // The end of an alarm (flag 2) is not a new alarm.
  if (kind === undefined || flag === FLAG_END) return true;
  const details: Record<string, number | string> = { item: `0x${id.toString(16)}`, alarm_id: alarmId, flag, type, label };
  addAlarm(record, level === undefined ? { kind, details } : { kind, level, details });
  return true;
}

// ---------------------------------------------------------------------------
// Batches

/** 0x0704: count u16 · type u8 (0 normal, 1 blind-area back-fill) · count × (length u16 · location body). */
function decodeLocationBatch(data: Buffer, at: number, end: number, session: SessionInfo): DecodedRecord[] {
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
function decodeVendorBatch(data: Buffer, h: Header, end: number, identity: DeviceIdentity | undefined, session: SessionInfo): Decoded {
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

// ---------------------------------------------------------------------------
// Other uplinks

/**
 * 0x0702 driver identity (2013): status u8 (1 card in, 2 out) · BCD time · [IC result u8 ·
 * [name length u8 · name · certificate code[20] · agency length u8 · agency · validity BCD[4]]].
 * A status-only record: the driver change at the time the card was read.
 */
function decodeDriverIdentity(data: Buffer, at: number, end: number, h: Header, session: SessionInfo): DecodedRecord {
  const r = new Reader(data, at, end);
  const cardStatus = r.u8();
  const timeAt = r.offset;
  r.skip(6);
  const fixTime = bcdTime(data, timeAt, session.timezoneMinutes ?? DEFAULT_ZONE_MINUTES);
  const attributes: Attributes = { driver_card_status: cardStatus === 1 ? 'inserted' : cardStatus === 2 ? 'removed' : cardStatus };
  if (cardStatus === 1 && r.remaining > 0) {
    const result = r.u8();
    attributes.driver_card_result = result;
    if (result === 0) {
      const nameLength = r.u8();
      attributes.driver_name = gbkText(data, r.offset, r.offset + nameLength);
      r.skip(nameLength);
      attributes.driver_card_code = asciiField(r.bytes(20));
      const agencyLength = r.u8();
      attributes.driver_card_agency = gbkText(data, r.offset, r.offset + agencyLength);
      r.skip(agencyLength);
      if (r.remaining >= 4) attributes.driver_card_valid_until = bcdDigits(r.bytes(4));
    }
  }
  return recordWithoutLocation(Number.isNaN(fixTime) ? session.now : fixTime, attributes, data.subarray(h.bodyStart, end));
}

/** 0x0107 terminal attributes: type u16 · maker[5] · model[20|30] · terminal id[7|30] · ICCID BCD[10] · hw · fw · … */
function terminalAttributesText(data: Buffer, at: number, end: number, h: Header): string {
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
function waybillText(data: Buffer, at: number, end: number): string {
  if (end - at < 4) return '';
  const length = Math.min(data.readUInt32BE(at), end - at - 4);
  return gbkText(data, at + 4, at + 4 + length);
}

// ---------------------------------------------------------------------------
// `( … )` sentences (e-locks on the same port)

/**
 * `(id,1,001,KIND,…)`. Not telemetry we store; a `BASE,2,TIME` time request is answered
 * by echoing it with the UTC time (yyyyMMddHHmmss) in place of TIME.
 */
function decodeTextSentence(frame: Buffer, session: SessionInfo): Decoded {
  if (frame[frame.length - 1] !== TEXT_CLOSE) throw new DecodeError('malformed', 'text sentence without its closing parenthesis');
  const text = frame.toString('latin1');
  const id = text.slice(1, text.indexOf(','));
  const terminalId = /^\d{6,20}$/.test(id) ? normalizeTerminalId(id) : '';
  const reply = /,BASE,2,TIME\)$/.test(text) ? Buffer.from(text.replace(/TIME\)$/, `${utcStamp(session.now)})`), 'latin1') : null;
  const decoded: Decoded = { records: [], reply, ignoredReason: `e-lock text sentence ${text}` };
  if (terminalId !== '') decoded.identity = { terminalId };
  return decoded;
}

function utcStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-T:]/g, '').slice(0, 14);
}

// ---------------------------------------------------------------------------
// Small readers

/** BCD YYMMDDhhmmss at `at`, in a clock `zoneMinutes` east of UTC, as UTC ms; NaN when not a valid time. */
export function bcdTime(buf: Buffer, at: number, zoneMinutes: number): number {
  const year = bcd2(buf[at]!);
  const month = bcd2(buf[at + 1]!);
  const day = bcd2(buf[at + 2]!);
  const hour = bcd2(buf[at + 3]!);
  const minute = bcd2(buf[at + 4]!);
  const second = bcd2(buf[at + 5]!);
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

function u16(buf: Buffer, at: number): number {
  return (buf[at]! << 8) | buf[at + 1]!;
}

function u32(buf: Buffer, at: number): number {
  return buf[at]! * 0x1000000 + ((buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!);
}

/** One BCD byte as 0-99, or -1 when a nibble is not a digit. */
function bcd2(b: number): number {
  const hi = b >> 4;
  const lo = b & 0x0f;
  return hi > 9 || lo > 9 ? -1 : hi * 10 + lo;
}

const ZONE_TEXT = /^(?:UTC|GMT)([+-])(\d{1,2})(?::?(\d{2}))?$/;

/** Item 0xEB as a zone text like "UTC+08:00", or null when it is something else. */
function zoneTextAt(buf: Buffer, v: number, length: number): string | null {
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

let gbkDecoder: TextDecoder | null | undefined;

/** GBK text (the standard's charset); latin1 when the runtime has no GBK decoder. */
function gbkText(buf: Buffer, start: number, end: number): string {
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
function utf16beText(buf: Buffer, start: number, end: number): string {
  const length = Math.max(0, (end - start) & ~1);
  const swapped = Buffer.from(buf.subarray(start, start + length)).swap16();
  return swapped.toString('utf16le');
}

/** A fixed-width ASCII field, trailing NULs and spaces removed. */
function asciiField(bytes: Buffer): string {
  return bytes.toString('latin1').replace(/[\0 ]+$/, '');
}

function hex2(n: number): string {
  return n.toString(16).padStart(2, '0');
}

function hex4(n: number): string {
  return `0x${n.toString(16).padStart(4, '0')}`;
}
