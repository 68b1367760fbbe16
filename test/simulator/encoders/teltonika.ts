/**
 * Teltonika device side: the IMEI packet, then codec 8 AVL packets of one record per
 * point, as an FMB unit sends them. Replies: 1 byte (0x01 accept / 0x00 refuse) to the
 * IMEI packet, a u32 record count to each AVL packet.
 */
import { crc16Arc } from '../../../gateway/codec/crc.js';
import type { DeviceAlarmKind } from '../../../core/alarms.js';
import type { EncodeContext, ProtocolEncoder, SimPoint } from './types.js';

/** Codec 8 counts records in one byte. */
const MAX_RECORDS_PER_PACKET = 255;

const IO_ODOMETER = 16;
const IO_EXTERNAL_VOLTAGE = 66;
const IO_ALARM = 236;
const IO_IGNITION = 239;
const IO_MOVEMENT = 240;
const IO_CRASH = 247;
const IO_GREEN_DRIVING = 253;
const IO_OVERSPEED = 255;

/** Which IO (and 1-byte value) raises each alarm a Teltonika unit can report natively. */
function eventIoOf(point: SimPoint): { id: number; value: number } | null {
  switch (point.alarm) {
    case 'event.acceleration':
      return { id: IO_GREEN_DRIVING, value: 1 };
    case 'event.harsh_brake':
      return { id: IO_GREEN_DRIVING, value: 2 };
    case 'event.curve':
      return { id: IO_GREEN_DRIVING, value: 3 };
    case 'event.ignition_on':
      return { id: IO_IGNITION, value: 1 };
    case 'event.ignition_off':
      return { id: IO_IGNITION, value: 0 };
    case 'event.overspeed':
      // IO 255 carries the speed at the event, one byte.
      return { id: IO_OVERSPEED, value: Math.min(255, Math.round(point.speedKmh)) };
    case 'event.sos':
      return { id: IO_ALARM, value: 1 };
    case 'alarm.adas.collision':
      return { id: IO_CRASH, value: 1 };
    default:
      // DSM, lane departure, BSD: no native Teltonika IO; the point goes out without the alarm.
      return null;
  }
}

/** The alarms this encoder can carry; the others are dropped (see eventIoOf). */
export const ENCODABLE_ALARMS: readonly DeviceAlarmKind[] = [
  'event.acceleration',
  'event.harsh_brake',
  'event.curve',
  'event.ignition_on',
  'event.ignition_off',
  'event.overspeed',
  'event.sos',
  'alarm.adas.collision',
];

export function imeiPacket(imei: string): Buffer {
  const packet = Buffer.alloc(2 + imei.length);
  packet.writeUInt16BE(imei.length, 0);
  packet.write(imei, 2, 'latin1');
  return packet;
}

/** One codec 8 record: GPS element, then IO groups of 1, 2, 4 and 8-byte values. */
function recordBytes(point: SimPoint): Buffer {
  const event = eventIoOf(point);
  // An ignition event carries the new state; otherwise the point's own state.
  const ignition = event?.id === IO_IGNITION ? event.value : point.ignition ? 1 : 0;
  const oneByte: Array<[number, number]> = [
    [IO_IGNITION, ignition],
    [IO_MOVEMENT, point.speedKmh > 0 ? 1 : 0],
  ];
  if (event && event.id !== IO_IGNITION) oneByte.push([event.id, event.value]);
  const twoByte: Array<[number, number]> = [[IO_EXTERNAL_VOLTAGE, ignition ? 13_800 : 12_400]];
  const fourByte: Array<[number, number]> = [[IO_ODOMETER, Math.round(point.odometerM)]];

  const ioLength = 2 + 4 + 2 * oneByte.length + 3 * twoByte.length + 5 * fourByte.length;
  const out = Buffer.alloc(24 + ioLength);
  let at = 0;
  out.writeUIntBE(0, at, 2); // high 16 bits of the u64 ms timestamp: zero until year 10889
  out.writeUIntBE(point.fixTime, at + 2, 6);
  at += 8;
  out[at++] = point.alarm === 'event.sos' ? 2 : point.alarm ? 1 : 0;
  out.writeInt32BE(Math.round(point.lng * 1e7), at);
  out.writeInt32BE(Math.round(point.lat * 1e7), at + 4);
  at += 8;
  out.writeInt16BE(Math.round(point.altitudeM), at);
  out.writeUInt16BE(Math.round(point.headingDeg) % 360, at + 2);
  out[at + 4] = point.satellites;
  out.writeUInt16BE(Math.round(point.speedKmh), at + 5);
  at += 7;
  out[at++] = event ? event.id : 0;
  out[at++] = oneByte.length + twoByte.length + fourByte.length;
  out[at++] = oneByte.length;
  for (const [id, value] of oneByte) {
    out[at++] = id;
    out[at++] = value;
  }
  out[at++] = twoByte.length;
  for (const [id, value] of twoByte) {
    out[at++] = id;
    out.writeUInt16BE(value, at);
    at += 2;
  }
  out[at++] = fourByte.length;
  for (const [id, value] of fourByte) {
    out[at++] = id;
    out.writeUInt32BE(value >>> 0, at);
    at += 4;
  }
  out[at++] = 0; // no 8-byte values
  return out;
}

/** Preamble · data length · (codec 8 · N · records · N) · CRC-16/ARC of the data field. */
export function avlPacket(points: SimPoint[]): Buffer {
  if (points.length < 1 || points.length > MAX_RECORDS_PER_PACKET) {
    throw new RangeError(`a codec 8 packet carries 1-${MAX_RECORDS_PER_PACKET} records, not ${points.length}`);
  }
  const records = points.map(recordBytes);
  const dataLength = 3 + records.reduce((sum, r) => sum + r.length, 0);
  const packet = Buffer.alloc(dataLength + 12);
  packet.writeUInt32BE(dataLength, 4);
  packet[8] = 0x08;
  packet[9] = points.length;
  let at = 10;
  for (const r of records) at += r.copy(packet, at);
  packet[at++] = points.length;
  packet.writeUInt32BE(crc16Arc(packet, 8, at), at);
  return packet;
}

function isImeiPacket(frame: Buffer): boolean {
  return frame.length >= 2 && frame.readUInt16BE(0) !== 0;
}

/** Length of the server's reply to `frame`: 1 byte for the IMEI packet, 4 for an AVL packet. */
export function replyLength(frame: Buffer): 1 | 4 {
  return isImeiPacket(frame) ? 1 : 4;
}

export const teltonikaEncoder: ProtocolEncoder & { replyLength: typeof replyLength } = {
  protocol: 'teltonika',
  maxPointsPerFrame: 50,
  loginFrame: (ctx: EncodeContext, done) => (done.length === 0 ? imeiPacket(ctx.imei) : null),
  issuedAuthCode: () => null,
  encode: (points: SimPoint[]) => avlPacket(points),
  /**
   * Stateless, because one encoder serves every simulated device. A first byte 0x01 can
   * only be the IMEI accept: a count ack starts with 0x00 (at most 255 records). A first
   * byte 0x00 is read as a count ack once 4 bytes are in; a lone 0x00 is the IMEI refusal,
   * after which the server closes, so a waiting caller sees the close instead. A caller
   * that knows what it sent can use `replyLength(frame)` instead.
   */
  takeReply(buf: Buffer) {
    if (buf.length === 0) return null;
    if (buf[0] === 0x01) return { reply: buf.subarray(0, 1), consumed: 1 };
    if (buf.length < 4) return null;
    return { reply: buf.subarray(0, 4), consumed: 4 };
  },
  isAck(reply: Buffer, frame: Buffer, points: number): boolean {
    if (isImeiPacket(frame)) return reply.length === 1 && reply[0] === 0x01;
    return reply.length === 4 && reply.readUInt32BE(0) === points;
  },
  replyLength,
};
