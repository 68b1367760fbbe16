/**
 * GT06 device side (a GT06N/VL01-style unit): login 0x01 announcing UTC, then one
 * packet per point: 0x22 GPS+LBS with the ACC byte and mileage, or 0x16 GPS+LBS+status
 * when the point raises an alarm. Every packet is answered with the 5-byte echo.
 */
import type { DeviceAlarmKind } from '../../../core/alarms.js';
import { toBcd } from '../../../gateway/codec/bcd.js';
import { shortPacket } from '../../../gateway/protocols/gt06/ack.js';
import type { EncodeContext, ProtocolEncoder, SimPoint } from './types.js';

export const PROTO_LOGIN = 0x01;
export const PROTO_LOCATION = 0x22;
export const PROTO_ALARM = 0x16;

/** Alarm codes of the 0x16 status block for the kinds a GT06 unit reports. */
const ALARM_CODES: Partial<Record<DeviceAlarmKind, number>> = {
  'event.sos': 0x01,
  'event.overspeed': 0x06,
  'event.harsh_brake': 0x1a,
  'event.curve': 0x2a,
  'event.acceleration': 0xf0,
};

/** Ignition on/off travel as the ACC state of the point itself (terminal info / ACC byte). */
export const ENCODABLE_ALARMS: readonly DeviceAlarmKind[] = Object.keys(ALARM_CODES) as DeviceAlarmKind[];

/** A fixed cell: MCC 247 (Latvia), MNC 1, LAC 0x1234, cell 0x00abcd. */
const CELL = Buffer.from([0x00, 0xf7, 0x01, 0x12, 0x34, 0x00, 0xab, 0xcd]);

/** 12-byte login content: IMEI as BCD with a leading 0 · type id · timezone UTC+0 (language English). */
export function loginPacket(imei: string, serial: number): Buffer {
  const content = Buffer.alloc(12);
  toBcd(`0${imei}`, 8).copy(content, 0);
  content.writeUInt16BE(0x3608, 8);
  content.writeUInt16BE(0x0002, 10);
  return shortPacket(PROTO_LOGIN, serial, content);
}

function ignitionOf(point: SimPoint): boolean {
  if (point.alarm === 'event.ignition_on') return true;
  if (point.alarm === 'event.ignition_off') return false;
  return point.ignition;
}

/** Time (UTC, binary) · GPS info (fix length 12, satellites) · lat · lng · speed · course/status. */
function gpsBlock(point: SimPoint): Buffer {
  const out = Buffer.alloc(18);
  const d = new Date(point.fixTime);
  out[0] = d.getUTCFullYear() - 2000;
  out[1] = d.getUTCMonth() + 1;
  out[2] = d.getUTCDate();
  out[3] = d.getUTCHours();
  out[4] = d.getUTCMinutes();
  out[5] = d.getUTCSeconds();
  out[6] = 0xc0 | Math.min(15, point.satellites);
  out.writeUInt32BE(Math.round(Math.abs(point.lat) * 1_800_000), 7);
  out.writeUInt32BE(Math.round(Math.abs(point.lng) * 1_800_000), 11);
  out[15] = Math.min(255, Math.round(point.speedKmh));
  const course = Math.round(point.headingDeg) % 360;
  const north = point.lat >= 0 ? 1 << 10 : 0;
  const west = point.lng < 0 ? 1 << 11 : 0;
  out.writeUInt16BE(course | north | west | (1 << 12), 16);
  return out;
}

/** The 0x10 GPS packet some units send with neither serial nor CRC: 78 78 12 10 · GPS · 0D 0A. */
export function checksumlessGpsPacket(point: SimPoint): Buffer {
  return Buffer.concat([Buffer.from([0x78, 0x78, 0x12, 0x10]), gpsBlock(point), Buffer.from([0x0d, 0x0a])]);
}

/** 0x12: GPS · cell, and no ACC: a unit that tells its ignition only in heartbeats. */
export function gpsLbsPacket(point: SimPoint, serial: number): Buffer {
  return shortPacket(0x12, serial, Buffer.concat([gpsBlock(point), CELL]));
}

/** 0x22: GPS · cell · ACC · upload mode 0 (interval) · re-upload 0 · mileage (m). */
export function locationPacket(point: SimPoint, serial: number): Buffer {
  const tail = Buffer.alloc(7);
  tail[0] = ignitionOf(point) ? 1 : 0;
  tail.writeUInt32BE(Math.round(point.odometerM) >>> 0, 3);
  return shortPacket(PROTO_LOCATION, serial, Buffer.concat([gpsBlock(point), CELL, tail]));
}

/** 0x16: GPS · cell length 9 + cell · terminal info (ACC, GPS on) · voltage 6 · GSM 4 · alarm · language. */
export function alarmPacket(point: SimPoint, code: number, serial: number): Buffer {
  const info = 0x40 | (ignitionOf(point) ? 0x02 : 0);
  const status = Buffer.from([info, 6, 4, code, 0x02]);
  return shortPacket(PROTO_ALARM, serial, Buffer.concat([gpsBlock(point), Buffer.from([9]), CELL, status]));
}

export const gt06Encoder: ProtocolEncoder = {
  protocol: 'gt06',
  maxPointsPerFrame: 1,
  loginFrame: (ctx: EncodeContext, done) => (done.length === 0 ? loginPacket(ctx.imei, ctx.serial) : null),
  issuedAuthCode: () => null,
  encode(points: SimPoint[], ctx: EncodeContext): Buffer {
    if (points.length !== 1) throw new RangeError(`a GT06 packet carries one point, not ${points.length}`);
    const point = points[0]!;
    const code = point.alarm ? ALARM_CODES[point.alarm] : undefined;
    return code === undefined ? locationPacket(point, ctx.serial) : alarmPacket(point, code, ctx.serial);
  },
  /** Server replies are short-form packets: LEN + 5 bytes. */
  takeReply(buf: Buffer) {
    if (buf.length < 3) return null;
    const total = buf[2]! + 5;
    if (buf.length < total) return null;
    return { reply: buf.subarray(0, total), consumed: total };
  },
  /** The echo names the packet's protocol number and serial. */
  isAck(reply: Buffer, frame: Buffer): boolean {
    return (
      reply.length === 10 &&
      reply[0] === 0x78 &&
      reply[3] === frame[3] &&
      reply.readUInt16BE(4) === frame.readUInt16BE(frame.length - 6)
    );
  },
};
