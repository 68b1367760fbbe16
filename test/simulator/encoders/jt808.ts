/**
 * JT/T 808 (2013 header) device side: 0x0100 registration, then 0x0102 authentication
 * with the code the 0x8100 reply hands out; a unit that kept its code from an earlier
 * connection only authenticates. Data: one 0x0200 for one point, a 0x0704 batch for several. Time is BCD in GMT+8, the standard's zone and our
 * server's default. Replies are 0x8001 general responses (0x8100 for registration).
 */
import type { DeviceAlarmKind } from '../../../core/alarms.js';
import { bcdDigits, toBcd } from '../../../gateway/codec/bcd.js';
import { xor8 } from '../../../gateway/codec/crc.js';
import { encodeMessage } from '../../../gateway/protocols/jt808/ack.js';
import { DELIMITER, unescapeFrame } from '../../../gateway/protocols/jt808/frame.js';
import type { EncodeContext, ProtocolEncoder, SimPoint } from './types.js';

export const MSG_REGISTER = 0x0100;
export const MSG_AUTH = 0x0102;
export const MSG_LOCATION = 0x0200;
export const MSG_LOCATION_BATCH = 0x0704;
/** The platform's confirmation of a latched alarm (SOS): the unit clears the bit. */
export const MSG_ALARM_CONFIRMATION = 0x8203;
const MSG_GENERAL_RESPONSE = 0x8001;
const MSG_REGISTER_RESPONSE = 0x8100;

/** The device clock's zone: GMT+8. */
export const DEVICE_ZONE_MINUTES = 8 * 60;

/**
 * A body holds at most 1023 bytes. A point costs 2 (batch length) + 28 (fixed) + 6 (odometer)
 * + 3 (satellites) = 39 bytes, plus up to 49 for an active-safety item: 10 points always fit.
 */
export const MAX_POINTS_PER_FRAME = 10;

const STATUS_IGNITION = 0x01;
const STATUS_POSITIONED = 0x02;
const STATUS_SOUTH = 0x04;
const STATUS_WEST = 0x08;

/** Alarm bits a standard terminal sets for these kinds. */
const ALARM_BITS: Partial<Record<DeviceAlarmKind, number>> = {
  'event.sos': 0x01,
  'event.overspeed': 0x02,
  'alarm.dsm.fatigue': 0x04,
};

/** Active-safety items (Jiangsu 0x64 ADAS / 0x65 DSM / 0x67 BSD, Guangdong 0x70 aggressive driving) and their type byte. */
const SAFETY_ITEMS: Partial<Record<DeviceAlarmKind, { id: number; type: number }>> = {
  'alarm.adas.collision': { id: 0x64, type: 0x01 },
  'alarm.adas.lane_departure': { id: 0x64, type: 0x02 },
  'alarm.dsm.phone': { id: 0x65, type: 0x02 },
  'alarm.bsd': { id: 0x67, type: 0x01 },
  'event.acceleration': { id: 0x70, type: 0x01 },
  'event.harsh_brake': { id: 0x70, type: 0x02 },
  'event.curve': { id: 0x70, type: 0x03 },
};

/**
 * The alarms a JT/T 808 unit carries to our decoder. Ignition on/off is no alarm here: it is
 * status bit 0, set from the point (an `event.ignition_*` point sets it accordingly).
 */
export const ENCODABLE_ALARMS: readonly DeviceAlarmKind[] = [
  ...(Object.keys(ALARM_BITS) as DeviceAlarmKind[]),
  ...(Object.keys(SAFETY_ITEMS) as DeviceAlarmKind[]),
];

export function phoneOf(ctx: EncodeContext): Buffer {
  return toBcd(ctx.terminalId, 6);
}

/** The auth code a server issuing no codes of its own returns in 0x8100 (Traccar): all 12 digits of the terminal id. */
export function authCodeOf(ctx: EncodeContext): string {
  return bcdDigits(phoneOf(ctx));
}

/** 0x0100 (2013): province · city · maker[5] · model[20] · terminal id[7] · plate colour 0 (no plate). */
export function registerFrame(ctx: EncodeContext): Buffer {
  const body = Buffer.alloc(2 + 2 + 5 + 20 + 7 + 1);
  body.write('SIMUL', 4, 'latin1');
  body.write('SIM-808', 9, 'latin1');
  body.write(ctx.terminalId.slice(-7).padStart(7, '0'), 29, 'latin1');
  return encodeMessage(MSG_REGISTER, phoneOf(ctx), ctx.serial, body);
}

/** 0x0102 (2013): the auth code as text (`ctx.authCode`, else the terminal digits). */
export function authFrame(ctx: EncodeContext): Buffer {
  return encodeMessage(MSG_AUTH, phoneOf(ctx), ctx.serial, Buffer.from(ctx.authCode ?? authCodeOf(ctx), 'latin1'));
}

/** The auth code of a 0x8100 registration reply with result 0; null for anything else. */
export function issuedAuthCode(reply: Buffer): string | null {
  const got = parseMessage(reply);
  if (!got || got.msgId !== MSG_REGISTER_RESPONSE || got.body.length < 3 || got.body[2] !== 0) return null;
  return got.body.toString('latin1', 3);
}

/** BCD YYMMDDhhmmss of `ms` in the device zone. */
function writeBcdTime(out: Buffer, at: number, ms: number): void {
  const d = new Date(ms + DEVICE_ZONE_MINUTES * 60_000);
  const parts = [d.getUTCFullYear() % 100, d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()];
  parts.forEach((n, i) => (out[at + i] = ((Math.floor(n / 10) << 4) | n % 10) & 0xff));
}

function statusOf(point: SimPoint): number {
  const ignition = point.alarm === 'event.ignition_on' ? true : point.alarm === 'event.ignition_off' ? false : point.ignition;
  return (ignition ? STATUS_IGNITION : 0) | STATUS_POSITIONED | (point.lat < 0 ? STATUS_SOUTH : 0) | (point.lng < 0 ? STATUS_WEST : 0);
}

/**
 * A 47-byte (0x64/0x65/0x70) or 41-byte (0x67) active-safety item: alarm id · flag 1 (start) ·
 * type · [level 1 · type-specific bytes] · speed · altitude · lat · lng · BCD time · status · label[16].
 */
function safetyItem(point: SimPoint, id: number, type: number, ctx: EncodeContext): Buffer {
  const bsd = id === 0x67;
  const value = Buffer.alloc(bsd ? 41 : 47);
  value.writeUInt32BE(ctx.serial >>> 0, 0);
  value[4] = 1;
  value[5] = type;
  if (id !== 0x70 && !bsd) value[6] = 1; // level
  let at = bsd ? 6 : 12;
  value[at++] = Math.min(255, Math.round(point.speedKmh));
  value.writeInt16BE(Math.round(point.altitudeM), at);
  value.writeUInt32BE(Math.round(Math.abs(point.lat) * 1e6), at + 2);
  value.writeUInt32BE(Math.round(Math.abs(point.lng) * 1e6), at + 6);
  writeBcdTime(value, at + 10, point.fixTime);
  value.writeUInt16BE(statusOf(point) & 0xffff, at + 16);
  at += 18;
  // Alarm label: terminal id[7] · BCD time · sequence · attachment count · reserved.
  value.write(ctx.terminalId.slice(-7).padStart(7, '0'), at, 'latin1');
  writeBcdTime(value, at + 7, point.fixTime);
  const item = Buffer.alloc(2 + value.length);
  item[0] = id;
  item[1] = value.length;
  value.copy(item, 2);
  return item;
}

/** One 0x0200 body: fixed part, odometer (0.1 km), satellites, and an active-safety item for such alarms. */
export function locationBody(point: SimPoint, ctx: EncodeContext): Buffer {
  const safety = point.alarm ? SAFETY_ITEMS[point.alarm] : undefined;
  const extra = safety ? safetyItem(point, safety.id, safety.type, ctx) : null;
  const body = Buffer.alloc(28 + 6 + 3 + (extra?.length ?? 0));
  body.writeUInt32BE((point.alarm ? (ALARM_BITS[point.alarm] ?? 0) : 0) >>> 0, 0);
  body.writeUInt32BE(statusOf(point) >>> 0, 4);
  body.writeUInt32BE(Math.round(Math.abs(point.lat) * 1e6), 8);
  body.writeUInt32BE(Math.round(Math.abs(point.lng) * 1e6), 12);
  body.writeInt16BE(Math.round(point.altitudeM), 16);
  body.writeUInt16BE(Math.round(point.speedKmh * 10), 18);
  body.writeUInt16BE(Math.round(point.headingDeg) % 360, 20);
  writeBcdTime(body, 22, point.fixTime);
  body[28] = 0x01;
  body[29] = 4;
  body.writeUInt32BE(Math.round(point.odometerM / 100) >>> 0, 30);
  body[34] = 0x31;
  body[35] = 1;
  body[36] = point.satellites;
  extra?.copy(body, 37);
  return body;
}

/** 0x0704: count · type 0 (normal) · (length u16 · location body) per point. */
export function batchBody(points: SimPoint[], ctx: EncodeContext): Buffer {
  const bodies = points.map((p) => locationBody(p, ctx));
  const out = Buffer.alloc(3 + bodies.reduce((n, b) => n + 2 + b.length, 0));
  out.writeUInt16BE(points.length, 0);
  let at = 3;
  for (const b of bodies) {
    out.writeUInt16BE(b.length, at);
    at += 2 + b.copy(out, at + 2);
  }
  return out;
}

/** The fields of a de-escaped message a device checks in a reply. */
interface Message {
  msgId: number;
  serial: number;
  body: Buffer;
}

/** De-escapes and checks a whole 7E…7E message; null when it is not a well-formed one. */
function parseMessage(frame: Buffer): Message | null {
  let bytes: Buffer;
  try {
    bytes = unescapeFrame(frame);
  } catch {
    return null;
  }
  if (bytes.length < 15 || bytes[0] !== DELIMITER || bytes[bytes.length - 1] !== DELIMITER) return null;
  const checkAt = bytes.length - 2;
  if (xor8(bytes, 1, checkAt) !== bytes[checkAt]) return null;
  const props = bytes.readUInt16BE(3);
  const headerLength = (props & 0x4000) !== 0 ? 2 + 2 + 1 + 10 + 2 : 2 + 2 + 6 + 2;
  const serialAt = 1 + headerLength - 2;
  const bodyStart = 1 + headerLength;
  if (bodyStart + (props & 0x3ff) !== checkAt) return null;
  return { msgId: bytes.readUInt16BE(1), serial: bytes.readUInt16BE(serialAt), body: bytes.subarray(bodyStart, checkAt) };
}

export const jt808Encoder: ProtocolEncoder = {
  protocol: 'jt808',
  maxPointsPerFrame: MAX_POINTS_PER_FRAME,
  loginFrame(ctx: EncodeContext, done): Buffer | null {
    const serial = (ctx.serial + done.length) & 0xffff;
    const last = done[done.length - 1];
    if (!last) return ctx.authCode !== undefined ? authFrame({ ...ctx, serial }) : registerFrame(ctx);
    const code = issuedAuthCode(last.reply);
    return code !== null ? authFrame({ ...ctx, serial, authCode: code }) : null;
  },
  issuedAuthCode,
  encode(points: SimPoint[], ctx: EncodeContext): Buffer {
    if (points.length < 1 || points.length > MAX_POINTS_PER_FRAME) {
      throw new RangeError(`a JT/T 808 data frame carries 1-${MAX_POINTS_PER_FRAME} points, not ${points.length}`);
    }
    return points.length === 1
      ? encodeMessage(MSG_LOCATION, phoneOf(ctx), ctx.serial, locationBody(points[0]!, ctx))
      : encodeMessage(MSG_LOCATION_BATCH, phoneOf(ctx), ctx.serial, batchBody(points, ctx));
  },
  /**
   * Cuts one reply, still escaped, delimiters included; junk before its 7E is dropped with it.
   * A 0x8203 alarm confirmation is no reply to a frame: the unit takes it (and so clears its
   * latched alarm) and goes on to the next message.
   */
  takeReply(buf: Buffer) {
    let start = buf.indexOf(DELIMITER);
    if (start < 0) return null;
    for (;;) {
      const end = buf.indexOf(DELIMITER, start + 1);
      if (end < 0) return null;
      // 7E 7E: the first closes something whose start we never saw; the second opens the reply.
      if (end === start + 1) {
        start = end;
        continue;
      }
      const reply = buf.subarray(start, end + 1);
      if (parseMessage(reply)?.msgId === MSG_ALARM_CONFIRMATION) {
        start = buf.indexOf(DELIMITER, end + 1);
        if (start < 0) return null;
        continue;
      }
      return { reply, consumed: end + 1 };
    }
  },
  /** 0x8001 for this frame's serial and id with result 0, or 0x8100 result 0 for a registration. */
  isAck(reply: Buffer, frame: Buffer): boolean {
    const sent = parseMessage(frame);
    const got = parseMessage(reply);
    if (!sent || !got) return false;
    if (sent.msgId === MSG_REGISTER) {
      return got.msgId === MSG_REGISTER_RESPONSE && got.body.length >= 3 && got.body.readUInt16BE(0) === sent.serial && got.body[2] === 0;
    }
    return (
      got.msgId === MSG_GENERAL_RESPONSE &&
      got.body.length === 5 &&
      got.body.readUInt16BE(0) === sent.serial &&
      got.body.readUInt16BE(2) === sent.msgId &&
      got.body[4] === 0
    );
  },
};
