/**
 * GT06 family (Concox, Jimi, and the many clones) frame decoder. One frame yields at most
 * one record. Layouts differ by vendor for the same protocol number: we interpret the
 * standard ones byte for byte and keep what we do not interpret as `extra_hex`, or ignore
 * the whole packet with a reason (README.md lists which).
 */
import { bcdDigits, isBcd } from '../../codec/bcd.js';
import { crc16X25 } from '../../codec/crc.js';
import { DecodeError, Reader } from '../../codec/reader.js';
import { recordWithoutLocation, type Decoded, type DecodedRecord, type DeviceAlarm, type SessionInfo } from '../../protocol.js';
import { echoReply, longEchoReply, PROTO_TIME_REQUEST, timeReply, wifiReply } from './ack.js';
import { alarmOfCode, alarmOfEventCode, alarmOfTerminalInfo } from './alarms.js';
import { LONG_START, PROTO_LOGIN, SHORT_LOGIN_BYTES, SHORT_START, WIFI_PROTOCOLS } from './frame.js';
import { decodeCommandReply, PROTO_COMMAND_REPLY, PROTO_COMMAND_REPLY_TEXT } from './replies.js';

export const PROTO_GPS = 0x10;
export const PROTO_GPS_LBS_6 = 0x11;
export const PROTO_GPS_LBS = 0x12;
export const PROTO_HEARTBEAT = 0x13;
/** The GK310's heartbeat: 0x13's status block with the battery as a voltage. */
export const PROTO_HEARTBEAT_GK310 = 0x23;
export const PROTO_LBS_STATUS = 0x19;
export const PROTO_GPS_LBS_2 = 0x22;
export const PROTO_ADDRESS_REQUEST = 0x2a;
export const PROTO_ALARM_EVENT = 0x95;
export const PROTO_GPS_4G = 0xa0;
export const PROTO_FENCE_MULTI = 0xa4;
export const PROTO_LBS_ALARM_4G = 0xa5;

/** Degrees = raw ÷ 1,800,000 (minutes × 30000). */
const COORDINATE_SCALE = 1_800_000;

/** The 0x10 GPS packet some units send without serial and CRC: 78 78 LEN 10 · GPS(18) · 0D 0A. */
const CHECKSUMLESS_GPS_BYTES = 2 + 1 + 1 + 18 + 2;

/** Course/status word bits. */
const COURSE_MASK = 0x03ff;
const NORTH = 1 << 10;
const WEST = 1 << 11;
const FIXED = 1 << 12;
const ACC_PRESENT = 1 << 14;
const ACC_ON = 1 << 15;

/** Terminal-info byte bits. */
const INFO_ACC = 1 << 1;
const INFO_CHARGING = 1 << 2;

/** Packets that start with the 18-byte GPS block and go on with a cell (LBS) block. */
const GPS_LBS_PROTOCOLS: ReadonlySet<number> = new Set([0x11, 0x12, 0x1a, 0x1e, 0x22, 0x2d, 0x37, 0xa0]);
/** AZ735 packets: the GPS block, then a vendor layout kept as `extra_hex`. */
const GPS_VENDOR_PROTOCOLS: ReadonlySet<number> = new Set([0x31, 0x32]);
/** GPS + length-prefixed LBS + status (terminal info, voltage, GSM, alarm, language[, fence]). */
const GPS_STATUS_PROTOCOLS: ReadonlySet<number> = new Set([0x16, 0x26, 0x27, 0xa4]);
/** Status blocks followed by a fence byte. */
const FENCE_BYTE_PROTOCOLS: ReadonlySet<number> = new Set([0x27, 0xa4]);
/** After the cell block: ACC · upload mode · re-upload flag [· mileage u32]. */
const ACC_BYTE_PROTOCOLS: ReadonlySet<number> = new Set([0x22, 0x2d, 0x37, 0xa0]);
/** Command packets, replies (0x15 and 0x21: replies.ts) and requests we do not serve: no echo. */
const NO_ECHO_PROTOCOLS: ReadonlySet<number> = new Set([0x80, 0x81, 0x82, PROTO_ADDRESS_REQUEST]);

/** AZ735 long-form GPS (0x32) and alarm (0x33) packets: the GPS block has a length byte. */
const AZ735_PROTOCOLS: ReadonlySet<number> = new Set([0x32, 0x33]);
const GPS_FIELDS_BYTES = 12;

/** Standard content sizes, where a longer packet is a vendor layout we do not interpret. */
const HEARTBEAT_CONTENT_BYTES = 5;
const GK310_HEARTBEAT_CONTENT_BYTES = 6;
const LBS_STATUS_CONTENT_BYTES = 8 + 5;
const ALARM_EVENT_SHORT_CONTENT_BYTES = 7;
const ALARM_EVENT_GPS_CONTENT_BYTES = 17;

/**
 * Models whose packets reuse a standard protocol number for their own layout (Traccar
 * keys these on the model too): NT and XT40 0x22 starts with the IMEI, QH302R 0x12 has no
 * GPS block first, LW, SEEWORLD and R11 heartbeats carry a supply voltage instead of levels.
 */
const VENDOR_LAYOUTS: Readonly<Record<number, RegExp>> = {
  [PROTO_GPS_LBS]: /^QH302R/i,
  [PROTO_HEARTBEAT]: /^(LW|SEEWORLD|R11)/i,
  [PROTO_GPS_LBS_2]: /^(NT|XT40)/i,
};

interface Frame {
  bytes: Buffer;
  long: boolean;
  proto: number;
  serial: number;
  /** Content between the protocol number and the serial. */
  content: Reader;
}

export function decode(bytes: Buffer, session: SessionInfo): Decoded {
  const long = bytes[0] === LONG_START;
  if (bytes.length < 2 || bytes[1] !== bytes[0] || (bytes[0] !== SHORT_START && !long)) {
    throw new DecodeError('malformed', 'not a 7878/7979 frame');
  }
  const headerBytes = long ? 4 : 3;
  if (bytes.length < headerBytes + 1 + 2) throw new DecodeError('truncated', `${bytes.length}-byte frame`);
  if (bytes[bytes.length - 2] !== 0x0d || bytes[bytes.length - 1] !== 0x0a) {
    throw new DecodeError('malformed', 'frame does not end with 0d0a');
  }
  const proto = bytes[headerBytes]!;
  const crcAt = bytes.length - 4;
  const crcOk = crcAt >= headerBytes + 3 && bytes.readUInt16BE(crcAt) === crc16X25(bytes, 2, crcAt);
  if (!crcOk) return decodeChecksumless(bytes, long, proto, session);

  const frame: Frame = {
    bytes,
    long,
    proto,
    serial: bytes.readUInt16BE(crcAt - 2),
    content: new Reader(bytes, headerBytes + 1, crcAt - 2),
  };
  if (proto === PROTO_COMMAND_REPLY || proto === PROTO_COMMAND_REPLY_TEXT) return decodeCommandReply(proto, frame.content, bytes);
  if (long) {
    if (AZ735_PROTOCOLS.has(proto)) return oneRecord(az735Record(frame, session), longEchoReply(proto, frame.serial));
    return ignored(frame, `long-form packet 0x${hex2(proto)} not interpreted`, null);
  }
  return decodeShort(frame, session);
}

function decodeShort(frame: Frame, session: SessionInfo): Decoded {
  const { proto, serial } = frame;
  const echo = echoReply(proto, serial);
  if (session.model !== null && VENDOR_LAYOUTS[proto]?.test(session.model)) {
    return ignored(frame, `0x${hex2(proto)} layout of ${session.model} not interpreted`, echo);
  }
  switch (proto) {
    case PROTO_LOGIN:
      return decodeLogin(frame.content, echo);
    case PROTO_HEARTBEAT:
      if (frame.content.remaining !== HEARTBEAT_CONTENT_BYTES) return ignored(frame, 'heartbeat variant not interpreted', echo);
      return oneRecord(statusOnlyRecord(frame, session.now, readStatus(frame.content, session.model)), echo);
    case PROTO_HEARTBEAT_GK310:
      if (frame.content.remaining !== GK310_HEARTBEAT_CONTENT_BYTES) return ignored(frame, 'heartbeat variant not interpreted', echo);
      return oneRecord(statusOnlyRecord(frame, session.now, readGk310Status(frame.content, session.model)), echo);
    case PROTO_TIME_REQUEST:
      return { records: [], replies: [], reply: timeReply(session.now, serial), ignoredReason: 'time request' };
    case PROTO_GPS:
      return oneRecord(gpsRecord(frame, session, 'none'), echo);
    case PROTO_LBS_STATUS:
      if (frame.content.remaining !== LBS_STATUS_CONTENT_BYTES) return ignored(frame, 'multi-cell 0x19 variant not interpreted', echo);
      frame.content.skip(8);
      return oneRecord(statusOnlyRecord(frame, session.now, readStatus(frame.content, session.model)), echo);
    case PROTO_LBS_ALARM_4G: {
      const status = frame.content.remaining >= 5 ? tailStatus(frame.content, 5, session.model) : null;
      if (!status) throw new DecodeError('truncated', '0xa5 shorter than its status block');
      return oneRecord(statusOnlyRecord(frame, session.now, status), echo);
    }
    case PROTO_ALARM_EVENT:
      return decodeAlarmEvent(frame, session, echo);
    default:
      if (GPS_LBS_PROTOCOLS.has(proto)) return oneRecord(gpsRecord(frame, session, 'lbs'), echo);
      if (GPS_STATUS_PROTOCOLS.has(proto)) return oneRecord(gpsRecord(frame, session, 'status'), echo);
      if (GPS_VENDOR_PROTOCOLS.has(proto)) return oneRecord(gpsRecord(frame, session, 'none'), echo);
      return ignored(frame, `protocol 0x${hex2(proto)} not interpreted`, NO_ECHO_PROTOCOLS.has(proto) ? null : echo);
  }
}

/** 0x01: IMEI as 8 BCD bytes with a leading 0 nibble · [type id u16 · timezone/language u16]. */
function decodeLogin(content: Reader, reply: Buffer): Decoded {
  const imei = readImei(content);
  const decoded: Decoded = { identity: { imei }, records: [], replies: [], reply, refuse: null };
  if (content.remaining >= 4) {
    content.skip(2); // type id
    decoded.announcedTimezoneMinutes = timezoneOf(content.u16());
  }
  return decoded;
}

function readImei(content: Reader): string {
  const id = content.bytes(8);
  if (!isBcd(id)) throw new DecodeError('malformed', `login id ${id.toString('hex')} is not BCD`);
  return bcdDigits(id).slice(1);
}

/** Bits 15–4: zone × 100 (800 = 8:00), bit 3: west. */
export function timezoneOf(field: number): number {
  const value = field >> 4;
  const minutes = Math.floor(value / 100) * 60 + (value % 100);
  return field & 0x08 ? -minutes : minutes;
}

/**
 * Frames whose CRC does not match: only the checksum-less variants real units send are
 * accepted (README.md); anything else is refused so the unit resends.
 */
function decodeChecksumless(bytes: Buffer, long: boolean, proto: number, session: SessionInfo): Decoded {
  if (!long && WIFI_PROTOCOLS.has(proto) && bytes.length >= 4 + 6 + 2) {
    return { records: [], replies: [], reply: wifiReply(proto, bytes.subarray(4, 10)), ignoredReason: 'WiFi/LBS packet (no GNSS fix) not interpreted' };
  }
  if (!long && proto === PROTO_LOGIN && bytes.length === SHORT_LOGIN_BYTES) {
    return { identity: { imei: readImei(new Reader(bytes, 4, 12)) }, records: [], replies: [], reply: echoReply(PROTO_LOGIN, 0), refuse: null };
  }
  if (!long && proto === PROTO_GPS && bytes.length === CHECKSUMLESS_GPS_BYTES) {
    const frame: Frame = { bytes, long, proto, serial: 0, content: new Reader(bytes, 4, bytes.length - 2) };
    return { records: [gpsRecord(frame, session, 'none')], replies: [], reply: null };
  }
  const crcAt = bytes.length - 4;
  const field = crcAt >= 2 ? bytes.readUInt16BE(crcAt).toString(16).padStart(4, '0') : 'none';
  const computed = crcAt >= 2 ? crc16X25(bytes, 2, crcAt).toString(16).padStart(4, '0') : 'none';
  throw new DecodeError('bad_checksum', `CRC field ${field}, computed ${computed}`);
}

// ---------------------------------------------------------------------------
// Blocks

interface Gps {
  fixTime: number;
  /** False when the date is all zeros: a unit that never had a fix. */
  hasTime: boolean;
  satellites: number | null;
  lat: number;
  lng: number;
  speedKmh: number | null;
  courseStatus: number;
}

/** Binary YY MM DD hh mm ss in the device zone, as ms UTC; NaN when not a date. */
function readTime(r: Reader, zoneMinutes: number): number {
  const y = r.u8();
  const mo = r.u8();
  const d = r.u8();
  const h = r.u8();
  const mi = r.u8();
  const s = r.u8();
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return NaN;
  return Date.UTC(2000 + y, mo - 1, d, h, mi, s) - zoneMinutes * 60_000;
}

/** `skipAfterTime`: bytes between the time and the GPS fields (AZ735's length byte). */
function readGps(r: Reader, zoneMinutes: number, withSatellitesAndSpeed: boolean, skipAfterTime = 0): Gps {
  const timeAt = r.offset;
  let fixTime = readTime(r, zoneMinutes);
  r.skip(skipAfterTime);
  const zeroDate = r.buf.readUIntBE(timeAt, 3) === 0;
  if (Number.isNaN(fixTime) && !zeroDate) {
    throw new DecodeError('malformed', `GPS time ${r.buf.subarray(timeAt, timeAt + 6).toString('hex')} is not a date`);
  }
  if (zeroDate) fixTime = NaN;
  const satellites = withSatellitesAndSpeed ? r.u8() & 0x0f : null;
  const lat = r.u32() / COORDINATE_SCALE;
  const lng = r.u32() / COORDINATE_SCALE;
  const speedKmh = withSatellitesAndSpeed ? r.u8() : null;
  const courseStatus = r.u16();
  return {
    fixTime,
    hasTime: !zeroDate,
    satellites,
    lat: courseStatus & NORTH ? lat : -lat,
    lng: courseStatus & WEST ? -lng : lng,
    speedKmh,
    courseStatus,
  };
}

interface Cell {
  mcc: number;
  mnc: number;
  lac: number;
  cellId: number;
}

/** MCC (bit 15 set: the MNC is 2 bytes) · MNC · LAC · cell id; 0x11 and the 4G packets use wider fields. */
function readCell(r: Reader, proto: number): Cell {
  const mccField = r.u16();
  const wideMnc = (mccField & 0x8000) !== 0 || proto === PROTO_GPS_LBS_6;
  const mnc = wideMnc ? r.u16() : r.u8();
  const fourG = proto === PROTO_GPS_4G;
  const lac = fourG ? r.u32() : r.u16();
  const cellId = proto === PROTO_GPS_LBS_6 ? r.u32() : fourG ? r.u64() : r.u24();
  return { mcc: mccField & 0x7fff, mnc, lac, cellId };
}

interface Status {
  ignition: boolean;
  alarms: DeviceAlarm[];
  attributes: Record<string, number | boolean>;
}

/** What the terminal-info byte says: the ACC bit (ignition), charging, an alarm in bits 3–5. */
function terminalInfo(info: number, model: string | null): Status {
  const fromInfo = alarmOfTerminalInfo(info, model);
  return {
    ignition: (info & INFO_ACC) !== 0,
    alarms: fromInfo ? [{ kind: fromInfo, details: { terminal_info: info } }] : [],
    attributes: { terminal_info: info, charging: (info & INFO_CHARGING) !== 0 },
  };
}

/** Terminal info · voltage level · GSM level · alarm code · language. */
function readStatus(r: Reader, model: string | null): Status {
  const status = terminalInfo(r.u8(), model);
  const voltage = r.u8();
  const gsm = r.u8();
  const alarmCode = r.u8();
  r.u8(); // language
  const fromCode = alarmOfCode(alarmCode, model);
  if (fromCode && fromCode !== status.alarms[0]?.kind) status.alarms.push({ kind: fromCode, details: { alarm_code: alarmCode } });
  // Levels 0–6 are the documented scale; newer firmware sends a percentage instead.
  status.attributes.battery_level = voltage <= 6 ? Math.round((voltage * 100) / 6) : Math.min(voltage, 100);
  status.attributes.gsm_level = gsm;
  if (alarmCode !== 0) status.attributes.alarm_code = alarmCode;
  return status;
}

/** 0x23 (GK310, as Traccar reads it): terminal info · battery u16 in 0.01 V · GSM level · language u16; no alarm byte. */
function readGk310Status(r: Reader, model: string | null): Status {
  const status = terminalInfo(r.u8(), model);
  status.attributes.battery_voltage_v = r.u16() / 100;
  status.attributes.gsm_level = r.u8();
  r.skip(2); // language
  return status;
}

/** The status block at a fixed distance from the end of the content (vendors insert bytes before it). */
function tailStatus(r: Reader, fromEnd: number, model: string | null): Status {
  r.offset = r.end - fromEnd;
  return readStatus(r, model);
}

// ---------------------------------------------------------------------------
// Records

function emptyRecord(frame: Frame, fixTime: number): DecodedRecord {
  return recordWithoutLocation(fixTime, { gt06_protocol: frame.proto }, frame.bytes);
}

function applyStatus(record: DecodedRecord, status: Status): void {
  record.ignition = status.ignition;
  record.alarms.push(...status.alarms);
  Object.assign(record.attributes, status.attributes);
}

/** A record without a location (heartbeat, cell-only alarm): timed by the server clock. */
function statusOnlyRecord(frame: Frame, now: number, status: Status): DecodedRecord {
  const record = emptyRecord(frame, now);
  applyStatus(record, status);
  return record;
}

type AfterGps = 'none' | 'lbs' | 'status';

/** The fix of a GPS block onto the record. */
function applyFix(record: DecodedRecord, gps: ReturnType<typeof readGps>): void {
  record.lat = gps.lat;
  record.lng = gps.lng;
  record.valid = (gps.courseStatus & FIXED) !== 0;
  record.speedKmh = gps.speedKmh;
  record.headingDeg = gps.courseStatus & COURSE_MASK;
  record.satellites = gps.satellites;
}

/** GPS block, then per `after` a cell block (and ACC byte, mileage) or a length-prefixed cell block and status. */
function gpsRecord(frame: Frame, session: SessionInfo, after: AfterGps): DecodedRecord {
  const r = frame.content;
  const gps = readGps(r, session.timezoneMinutes ?? 0, true);
  const record = emptyRecord(frame, gps.hasTime ? gps.fixTime : session.now);
  const neverFixed = (gps.courseStatus & FIXED) === 0 && gps.lat === 0 && gps.lng === 0;
  if (gps.hasTime && !neverFixed) {
    applyFix(record, gps);
  }
  if (gps.courseStatus & ACC_PRESENT) record.ignition = (gps.courseStatus & ACC_ON) !== 0;

  if (after === 'lbs') {
    setCell(record, readCell(r, frame.proto));
    if (ACC_BYTE_PROTOCOLS.has(frame.proto) && r.remaining >= 3) {
      record.ignition = r.u8() !== 0;
      record.attributes.upload_mode = r.u8();
      record.attributes.reupload = r.u8() !== 0;
    }
    if (r.remaining === 4) record.odometerM = r.u32();
  } else if (after === 'status') {
    const statusBytes = FENCE_BYTE_PROTOCOLS.has(frame.proto) ? 6 : 5;
    const cellLength = r.u8();
    const cellRead = cellLength > 0 && r.remaining - statusBytes >= 8;
    if (cellRead) setCell(record, readCell(r, frame.proto === PROTO_FENCE_MULTI ? PROTO_GPS_4G : frame.proto));
    // The status block follows the cell block, or ends the packet when vendors put a
    // byte or zero filler between them, or send no cell block at all.
    const statusAt = cellRead && r.remaining > statusBytes + 1 ? r.offset : r.end - statusBytes;
    if (statusAt < r.offset) throw new DecodeError('truncated', `0x${hex2(frame.proto)} shorter than its status block`);
    keepExtra(record, r, statusAt);
    applyStatus(record, readStatus(r, session.model));
  }
  keepExtra(record, r, r.end);
  return record;
}

/**
 * AZ735 long form: time · GPS length · [satellites, lat, lng, speed, course/status] · then
 * cell, extra cells, WiFi and status blocks, kept as `extra_hex`.
 */
function az735Record(frame: Frame, session: SessionInfo): DecodedRecord {
  const r = frame.content;
  const timeAt = r.offset;
  const fixTime = readTime(r, session.timezoneMinutes ?? 0);
  if (Number.isNaN(fixTime)) throw new DecodeError('malformed', `GPS time ${r.buf.toString('hex', timeAt, timeAt + 6)} is not a date`);
  const gpsLength = r.u8();
  const record = emptyRecord(frame, fixTime);
  if (gpsLength >= GPS_FIELDS_BYTES) {
    r.offset = timeAt;
    const gps = readGps(r, session.timezoneMinutes ?? 0, true, 1);
    applyFix(record, gps);
    r.skip(gpsLength - GPS_FIELDS_BYTES);
  } else {
    r.skip(gpsLength);
  }
  keepExtra(record, r, r.end);
  return record;
}

/** 0x95 (JC100/JC400): time · event code, or the GPS block without satellites and speed · event code. */
function decodeAlarmEvent(frame: Frame, session: SessionInfo, echo: Buffer): Decoded {
  const r = frame.content;
  const zone = session.timezoneMinutes ?? 0;
  if (r.remaining === ALARM_EVENT_SHORT_CONTENT_BYTES) {
    const at = readTime(r, zone);
    if (Number.isNaN(at)) throw new DecodeError('malformed', 'alarm time is not a date');
    const record = emptyRecord(frame, at);
    addEventAlarm(record, r.u8(), false);
    return oneRecord(record, echo);
  }
  if (r.remaining !== ALARM_EVENT_GPS_CONTENT_BYTES) return ignored(frame, '0x95 variant (video event files) not interpreted', echo);
  const gps = readGps(r, zone, false);
  if (!gps.hasTime) throw new DecodeError('malformed', 'alarm without a date');
  const record = emptyRecord(frame, gps.fixTime);
  record.lat = gps.lat;
  record.lng = gps.lng;
  record.valid = (gps.courseStatus & FIXED) !== 0;
  record.headingDeg = gps.courseStatus & COURSE_MASK;
  addEventAlarm(record, r.u8(), true);
  return oneRecord(record, echo);
}

function addEventAlarm(record: DecodedRecord, code: number, withLocation: boolean): void {
  record.attributes.event_code = code;
  const kind = alarmOfEventCode(code, withLocation);
  if (kind) record.alarms.push({ kind, details: { event_code: code } });
}

function setCell(record: DecodedRecord, cell: Cell): void {
  record.attributes.mcc = cell.mcc;
  record.attributes.mnc = cell.mnc;
  record.attributes.lac = cell.lac;
  record.attributes.cell_id = cell.cellId;
}

/** Bytes up to `end` we do not interpret are kept, so nothing the unit sent is lost. */
function keepExtra(record: DecodedRecord, r: Reader, end: number): void {
  if (end > r.offset) {
    const previous = record.attributes.extra_hex;
    const hex = r.buf.toString('hex', r.offset, end);
    record.attributes.extra_hex = typeof previous === 'string' ? `${previous}${hex}` : hex;
    r.offset = end;
  }
}

function oneRecord(record: DecodedRecord, reply: Buffer | null): Decoded {
  return { records: [record], replies: [], reply };
}

function ignored(frame: Frame, why: string, reply: Buffer | null): Decoded {
  return { records: [], replies: [], reply, ignoredReason: `${why}: ${frame.bytes.toString('hex')}` };
}

const hex2 = (n: number): string => n.toString(16).padStart(2, '0');
