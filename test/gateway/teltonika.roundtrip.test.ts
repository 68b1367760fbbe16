/**
 * The simulator's Teltonika encoder against our decoder: what a device sends comes back
 * with the same values, the replies are the acks the device waits for, and the alarm
 * rules hold for every alarm a Teltonika unit can report natively.
 */
import { describe, expect, it } from 'vitest';
import type { DeviceAlarmKind } from '../../core/alarms.js';
import { crc16Arc } from '../../gateway/codec/crc.js';
import type { SessionInfo } from '../../gateway/protocol.js';
import { teltonika } from '../../gateway/protocols/teltonika/index.js';
import { decodeUdp } from '../../gateway/protocols/teltonika/udp.js';
import { ENCODABLE_ALARMS, avlPacket, imeiPacket, replyLength, teltonikaEncoder } from '../simulator/encoders/teltonika.js';
import type { EncodeContext, SimPoint } from '../simulator/encoders/types.js';
import { Route } from '../simulator/route.js';

const ctx: EncodeContext = { imei: '352098071234566', terminalId: '098071234566', serial: 1 };
const session: SessionInfo = { imei: ctx.imei, model: null, timezoneMinutes: null, frameIndex: 1, now: Date.UTC(2026, 5, 1) };

function route(n: number, seed = 5): SimPoint[] {
  const r = new Route({ seed, startLat: -33.45, startLng: -70.66, startTime: Date.UTC(2026, 5, 1, 8), harshBrakeChance: 0.05 });
  return Array.from({ length: n }, () => r.next());
}

function decodeOne(frame: Buffer) {
  const split = teltonika.splitFrames(frame);
  expect(split.frames).toHaveLength(1);
  expect(split.consumed).toBe(frame.length);
  return teltonika.decode(split.frames[0]!, session);
}

describe('Teltonika encoder -> decoder', () => {
  it('logs in with the IMEI packet, and the accept reply is its ack', () => {
    const login = teltonikaEncoder.loginFrame(ctx, []);
    const decoded = decodeOne(login!);
    expect(decoded.identity).toEqual({ imei: ctx.imei });
    expect(decoded.records).toHaveLength(0);
    expect(teltonikaEncoder.isAck(decoded.reply!, login!, 0)).toBe(true);
    expect(teltonikaEncoder.isAck(decoded.refuse!, login!, 0)).toBe(false);
    expect(replyLength(login!)).toBe(decoded.reply!.length);
  });

  it.each([1, 3, 50, 255])('round-trips %i point(s) per frame with the same values and a matching count ack', (n) => {
    const points = route(n);
    const frame = teltonikaEncoder.encode(points, ctx);
    const decoded = decodeOne(frame);
    expect(decoded.records).toHaveLength(n);
    expect(teltonikaEncoder.isAck(decoded.reply!, frame, n)).toBe(true);
    expect(replyLength(frame)).toBe(decoded.reply!.length);
    decoded.records.forEach((r, i) => {
      const p = points[i]!;
      expect(r).toMatchObject({
        fixTime: p.fixTime,
        valid: true,
        speedKmh: p.speedKmh,
        headingDeg: p.headingDeg,
        altitudeM: p.altitudeM,
        satellites: p.satellites,
        ignition: p.ignition,
        odometerM: p.odometerM,
      });
      expect(r.lat).toBeCloseTo(p.lat, 6);
      expect(r.lng).toBeCloseTo(p.lng, 6);
      expect(r.attributes).toMatchObject({ io239: 1, io240: p.speedKmh > 0 ? 1 : 0, io16: p.odometerM, io66: 13_800 });
      expect(r.alarms.map((a) => a.kind)).toEqual(p.alarm ? [p.alarm] : []);
      // raw is the record's own bytes inside the frame, not a copy.
      expect(r.raw.buffer).toBe(frame.buffer);
    });
    // Records tile the data field: codec and count in front, count and CRC behind.
    const first = decoded.records[0]!.raw;
    const last = decoded.records[n - 1]!.raw;
    expect(first.byteOffset - frame.byteOffset).toBe(10);
    expect(last.byteOffset - frame.byteOffset + last.length).toBe(frame.length - 5);
  });

  it.each(ENCODABLE_ALARMS.map((k) => [k]))('carries %s through its event IO', (kind: DeviceAlarmKind) => {
    const [point] = route(1);
    const frame = avlPacket([{ ...point!, speedKmh: 97, ignition: kind !== 'event.ignition_off', alarm: kind }]);
    const [record] = decodeOne(frame).records;
    expect(record!.alarms.map((a) => a.kind)).toEqual([kind]);
    if (kind === 'event.ignition_on' || kind === 'event.ignition_off') expect(record!.ignition).toBe(kind === 'event.ignition_on');
    if (kind === 'event.overspeed') expect(record!.alarms[0]!.details).toEqual({ io255: 97 });
    if (kind === 'event.harsh_brake') expect(record!.alarms[0]!.details).toEqual({ io253: 2 });
    if (kind === 'event.sos') expect(record!.attributes.priority).toBe(2);
  });

  it('sends alarms Teltonika has no IO for as plain points', () => {
    const [point] = route(1);
    for (const kind of ['alarm.dsm.fatigue', 'alarm.dsm.phone', 'alarm.adas.lane_departure', 'alarm.bsd'] as const) {
      const [record] = decodeOne(avlPacket([{ ...point!, alarm: kind }])).records;
      expect(record!.alarms).toEqual([]);
      expect(record!.attributes.event_io).toBe(0);
    }
  });

  it('raises no alarm from IOs that merely sit in a periodic record', () => {
    const [point] = route(1);
    const frame = avlPacket([{ ...point!, alarm: 'event.harsh_brake' }]);
    // Same record with its event IO id cleared: IO 253 is still there, but it did not trigger the record.
    const periodic = Buffer.from(frame);
    const eventIoAt = 10 + 24;
    expect(periodic[eventIoAt]).toBe(253);
    periodic[eventIoAt] = 0;
    const dataEnd = periodic.length - 4;
    periodic.writeUInt32BE(crc16Arc(periodic, 8, dataEnd), dataEnd);
    const [record] = decodeOne(periodic).records;
    expect(record!.attributes.io253).toBe(2);
    expect(record!.alarms).toEqual([]);
  });

  it('refuses a frame whose CRC does not match, with no ack', () => {
    const frame = Buffer.from(teltonikaEncoder.encode(route(2), ctx));
    frame[20] = frame[20]! ^ 0xff;
    expect(() => teltonika.decode(frame, session)).toThrow(expect.objectContaining({ code: 'bad_checksum', reply: null }));
  });

  it('reports a unit that never had a fix (0/0, no satellites) as no location', () => {
    const [point] = route(1);
    const [record] = decodeOne(avlPacket([{ ...point!, lat: 0, lng: 0, satellites: 0 }])).records;
    expect(record).toMatchObject({ lat: null, lng: null, valid: false });
  });

  it('decodes the same records from a UDP datagram and acks with the packet ids', () => {
    const points = route(3);
    const tcp = teltonikaEncoder.encode(points, ctx);
    const data = tcp.subarray(8, tcp.length - 4);
    const imei = Buffer.from(ctx.imei, 'latin1');
    const header = Buffer.alloc(8);
    header.writeUInt16BE(6 + imei.length + data.length, 0);
    header.writeUInt16BE(0xbeef, 2);
    header[4] = 0x01;
    header[5] = 0x07;
    header.writeUInt16BE(imei.length, 6);
    const decoded = decodeUdp(Buffer.concat([header, imei, data]), session);
    expect(decoded.imei).toBe(ctx.imei);
    expect(decoded.records.map((r) => r.fixTime)).toEqual(points.map((p) => p.fixTime));
    expect(decoded.reply!.toString('hex')).toBe('0005beef010703');
  });
});

describe('Teltonika encoder replies', () => {
  it('takes a 1-byte IMEI accept and 4-byte count acks off the front of the inbox', () => {
    expect(teltonikaEncoder.takeReply(Buffer.alloc(0))).toBeNull();
    expect(teltonikaEncoder.takeReply(Buffer.from('01', 'hex'))).toEqual({ reply: Buffer.from('01', 'hex'), consumed: 1 });
    expect(teltonikaEncoder.takeReply(Buffer.from('0000', 'hex'))).toBeNull();
    expect(teltonikaEncoder.takeReply(Buffer.from('0000000201', 'hex'))).toEqual({ reply: Buffer.from('00000002', 'hex'), consumed: 4 });
  });

  it('checks acks against what was sent', () => {
    const login = imeiPacket(ctx.imei);
    const frame = teltonikaEncoder.encode(route(2), ctx);
    expect(teltonikaEncoder.isAck(Buffer.from('01', 'hex'), login, 0)).toBe(true);
    expect(teltonikaEncoder.isAck(Buffer.from('00', 'hex'), login, 0)).toBe(false);
    expect(teltonikaEncoder.isAck(Buffer.from('00000002', 'hex'), frame, 2)).toBe(true);
    expect(teltonikaEncoder.isAck(Buffer.from('00000001', 'hex'), frame, 2)).toBe(false);
    expect(replyLength(login)).toBe(1);
    expect(replyLength(frame)).toBe(4);
  });

  it('refuses to build a codec 8 packet of more than 255 records', () => {
    expect(() => avlPacket(route(256))).toThrow(RangeError);
  });
});
