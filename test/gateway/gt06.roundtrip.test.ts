/**
 * The simulator's GT06 encoder against our decoder: what a unit sends comes back with the
 * same values, the replies are the echoes the unit waits for, a corrupted packet is refused
 * and the time request is answered with the server clock.
 */
import { describe, expect, it } from 'vitest';
import { refusal } from '../support/decoding.js';
import type { DeviceAlarmKind } from '../../core/alarms.js';
import { crc16X25 } from '../../gateway/codec/crc.js';
import type { SessionInfo } from '../../gateway/protocol.js';
import { shortPacket } from '../../gateway/protocols/gt06/ack.js';
import { timezoneOf } from '../../gateway/protocols/gt06/decode.js';
import { gt06 } from '../../gateway/protocols/gt06/index.js';
import { ENCODABLE_ALARMS, PROTO_ALARM, PROTO_LOCATION, gt06Encoder, loginPacket } from '../simulator/encoders/gt06.js';
import type { EncodeContext, SimPoint } from '../simulator/encoders/types.js';
import { Route } from '../simulator/route.js';

const ctx: EncodeContext = { imei: '352098071234566', terminalId: '098071234566', serial: 0x0d0a };
const session: SessionInfo = { imei: null, model: null, timezoneMinutes: null, frameIndex: 0, now: Date.UTC(2026, 6, 1, 12) };

/** Route points without device alarms (the route's harsh brakes would turn them into 0x16 alarm packets). */
function route(n: number, opts: { seed?: number; lat?: number; lng?: number } = {}): SimPoint[] {
  const r = new Route({
    seed: opts.seed ?? 7,
    startLat: opts.lat ?? 56.95,
    startLng: opts.lng ?? 24.1,
    startTime: Date.UTC(2026, 5, 1, 8),
    harshBrakeChance: 0,
  });
  // Ignition off now and then, so the ACC state is not a constant.
  return Array.from({ length: n }, (_, i) => ({ ...r.next(), ignition: i % 7 !== 3 }));
}

function decodeOne(frame: Buffer, s: SessionInfo = session) {
  const split = gt06.splitFrames(frame);
  expect(split.frames).toHaveLength(1);
  expect(split.consumed).toBe(frame.length);
  return gt06.decode(split.frames[0]!, s);
}

/** The 5-byte echo built by hand: 78 78 05 <proto> <serial> <CRC-16/X-25 over 05..serial> 0d 0a. */
function expectedEcho(proto: number, serial: number): string {
  const body = Buffer.from([0x05, proto, serial >> 8, serial & 0xff]);
  const crc = crc16X25(body);
  return `7878${body.toString('hex')}${crc.toString(16).padStart(4, '0')}0d0a`;
}

describe('GT06 encoder -> decoder', () => {
  it.each([
    ['352098071234566', 1],
    ['868935060005020', 0x0d0a],
    ['000000000000001', 0xffff],
  ])('logs in IMEI %s (serial %i), announces UTC, and gets the echo the unit expects', (imei, serial) => {
    const frame = loginPacket(imei, serial);
    const decoded = decodeOne(frame);
    expect(decoded.identity).toEqual({ imei });
    expect(decoded.announcedTimezoneMinutes).toBe(0);
    expect(decoded.records).toHaveLength(0);
    expect(decoded.reply!.toString('hex')).toBe(expectedEcho(0x01, serial));
    expect(gt06Encoder.isAck(decoded.reply!, frame, 0)).toBe(true);
    // The echo names this packet's serial: it is no ack for the next login.
    expect(gt06Encoder.isAck(decoded.reply!, loginPacket(imei, (serial + 1) & 0xffff), 0)).toBe(false);
    expect(gt06Encoder.loginFrame({ ...ctx, imei, serial }, [])!.equals(frame)).toBe(true);
  });

  it('reads the login time-zone field: zone x 100 in bits 15-4, bit 3 west', () => {
    expect(800 << 4).toBe(0x3200);
    expect(timezoneOf(0x3200)).toBe(480);
    expect(timezoneOf(0x3208)).toBe(-480);
    expect(timezoneOf(530 << 4)).toBe(330);
    expect(timezoneOf((530 << 4) | 0x08)).toBe(-330);
    expect(timezoneOf((1245 << 4) | 0x02)).toBe(12 * 60 + 45); // language bits ignored
    expect(timezoneOf(0x0002)).toBe(0); // the simulator's login: UTC, English
  });

  it('announces the zone of a login that states one', () => {
    const content = Buffer.alloc(12);
    Buffer.from('0352098071234566', 'hex').copy(content);
    content.writeUInt16BE(0x3608, 8);
    content.writeUInt16BE((530 << 4) | 0x08 | 0x02, 10);
    expect(decodeOne(shortPacket(0x01, 9, content)).announcedTimezoneMinutes).toBe(-330);
  });

  it.each([
    ['north-east', 56.95, 24.1],
    ['south-east', -33.87, 151.21],
    ['north-west', 40.71, -74.01],
    ['south-west', -34.6, -58.38],
  ])('round-trips %s points with the same values and a matching ack', (_where, lat, lng) => {
    const points = route(60, { lat, lng });
    points.forEach((p, i) => {
      const frame = gt06Encoder.encode([p], { ...ctx, serial: i });
      expect(frame[3]).toBe(PROTO_LOCATION);
      const decoded = decodeOne(frame);
      expect(decoded.records).toHaveLength(1);
      const r = decoded.records[0]!;
      expect(r.fixTime).toBe(p.fixTime);
      expect(r.lat!).toBeCloseTo(p.lat, 5);
      expect(r.lng!).toBeCloseTo(p.lng, 5);
      expect(Math.sign(r.lat!)).toBe(Math.sign(lat));
      expect(Math.sign(r.lng!)).toBe(Math.sign(lng));
      expect(r.speedKmh).toBe(Math.round(p.speedKmh));
      expect(r.headingDeg).toBe(Math.round(p.headingDeg) % 360);
      expect(r.satellites).toBe(Math.min(15, p.satellites));
      expect(r.ignition).toBe(p.ignition);
      expect(r.odometerM).toBe(Math.round(p.odometerM));
      expect(r.valid).toBe(true);
      expect(r.altitudeM).toBeNull();
      expect(r.alarms).toEqual([]);
      expect(r.raw.equals(frame)).toBe(true);
      expect(r.attributes).toMatchObject({ gt06_protocol: PROTO_LOCATION, mcc: 247, mnc: 1, lac: 0x1234, cell_id: 0xabcd });
      expect(decoded.reply!.toString('hex')).toBe(expectedEcho(PROTO_LOCATION, i));
      expect(gt06Encoder.isAck(decoded.reply!, frame, 1)).toBe(true);
    });
    // The route moved and turned, so the values above were not all alike.
    expect(new Set(points.map((p) => p.speedKmh)).size).toBeGreaterThan(5);
    expect(new Set(points.map((p) => p.ignition)).size).toBe(2);
  });

  it('clamps what the packet cannot hold: speed to 255, satellites to 15', () => {
    const [p] = route(1);
    const r = decodeOne(gt06Encoder.encode([{ ...p!, speedKmh: 300, satellites: 20 }], ctx)).records[0]!;
    expect(r.speedKmh).toBe(255);
    expect(r.satellites).toBe(15);
  });

  it.each(ENCODABLE_ALARMS.map((kind) => [kind]))('carries %s to the same alarm kind', (kind: DeviceAlarmKind) => {
    const [p] = route(1);
    for (const ignition of [true, false]) {
      const frame = gt06Encoder.encode([{ ...p!, ignition, alarm: kind }], ctx);
      expect(frame[3]).toBe(PROTO_ALARM);
      const decoded = decodeOne(frame);
      const r = decoded.records[0]!;
      expect(r.alarms.map((a) => a.kind)).toEqual([kind]);
      expect(r.ignition).toBe(ignition);
      expect(r.fixTime).toBe(p!.fixTime);
      expect(r.lat!).toBeCloseTo(p!.lat, 5);
      expect(r.lng!).toBeCloseTo(p!.lng, 5);
      expect(r.valid).toBe(true);
      expect(gt06Encoder.isAck(decoded.reply!, frame, 1)).toBe(true);
    }
  });

  it('carries no alarm on a plain point', () => {
    for (const p of route(20)) {
      expect(decodeOne(gt06Encoder.encode([p], ctx)).records[0]!.alarms).toEqual([]);
    }
  });

  it('carries ignition changes as the ACC state, not as an alarm', () => {
    const [p, q] = route(2);
    const off = decodeOne(gt06Encoder.encode([{ ...p!, ignition: true, alarm: 'event.ignition_off' }], ctx)).records[0]!;
    const on = decodeOne(gt06Encoder.encode([{ ...q!, ignition: false, alarm: 'event.ignition_on' }], ctx)).records[0]!;
    expect([off.ignition, on.ignition]).toEqual([false, true]);
    expect([...off.alarms, ...on.alarms]).toEqual([]);
  });

  it('reads the device clock in the session zone: UTC+8 puts the fix 8 h earlier', () => {
    for (const p of route(5)) {
      const frame = gt06Encoder.encode([p], ctx);
      const utc = decodeOne(frame).records[0]!.fixTime;
      expect(utc).toBe(p.fixTime);
      expect(decodeOne(frame, { ...session, timezoneMinutes: 480 }).records[0]!.fixTime).toBe(utc - 8 * 3_600_000);
      expect(decodeOne(frame, { ...session, timezoneMinutes: -330 }).records[0]!.fixTime).toBe(utc + 330 * 60_000);
    }
  });

  it('refuses a 0x22 packet with any one byte changed between LEN and CRC with bad_checksum, and no reply', () => {
    const [p] = route(1);
    const frame = gt06Encoder.encode([p!], ctx);
    expect(() => decodeOne(frame)).not.toThrow();
    for (let at = 2; at < frame.length - 2; at++) {
      for (const mask of [0x01, 0x80]) {
        const bad = Buffer.from(frame);
        bad[at] = bad[at]! ^ mask;
        const err = refusal(() => gt06.decode(bad, session));
        expect(err.code, `byte ${at} ^ ${mask}`).toBe('bad_checksum');
        expect(err.reply).toBeNull();
      }
    }
  });

  it.each([
    ['the test clock', session.now],
    ['the last second of a year, with milliseconds', Date.UTC(2031, 11, 31, 23, 59, 58, 999)],
  ])('answers a time request 0x8A with %s as UTC and stores nothing', (_name, now) => {
    const serial = 0x1234;
    const decoded = decodeOne(shortPacket(0x8a, serial), { ...session, now, timezoneMinutes: 480 });
    expect(decoded.records).toHaveLength(0);
    const reply = decoded.reply!;
    const d = new Date(now);
    const time = [d.getUTCFullYear() - 2000, d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()];
    expect(reply).toHaveLength(16);
    expect([...reply.subarray(0, 4)]).toEqual([0x78, 0x78, 0x0b, 0x8a]);
    expect([...reply.subarray(4, 10)]).toEqual(time);
    expect(reply.readUInt16BE(10)).toBe(serial);
    expect(reply.readUInt16BE(12)).toBe(crc16X25(reply, 2, reply.length - 4));
    expect(reply.subarray(14).toString('hex')).toBe('0d0a');
    // The reply is itself a well-formed frame.
    expect(gt06.splitFrames(reply).frames).toEqual([reply]);
  });

  it('spells the time reply for 2026-07-01 12:00:00 UTC byte for byte', () => {
    const reply = decodeOne(shortPacket(0x8a, 0x0102)).reply!;
    expect(reply.subarray(0, 12).toString('hex')).toBe('78780b8a1a07010c00000102');
  });
});

describe('GT06 simulator reply handling', () => {
  it('cuts one reply at a time and waits for a partial one', () => {
    const [p] = route(1);
    const login = loginPacket(ctx.imei, 1);
    const frame = gt06Encoder.encode([p!], { ...ctx, serial: 2 });
    const loginReply = decodeOne(login).reply!;
    const reply = decodeOne(frame).reply!;
    const stream = Buffer.concat([loginReply, reply, reply.subarray(0, 4)]);
    const first = gt06Encoder.takeReply(stream)!;
    expect(first.reply.equals(loginReply)).toBe(true);
    const second = gt06Encoder.takeReply(stream.subarray(first.consumed))!;
    expect(second.reply.equals(reply)).toBe(true);
    expect(gt06Encoder.takeReply(stream.subarray(first.consumed + second.consumed))).toBeNull();
  });

  it('rejects the echo of another packet or another serial', () => {
    const [p] = route(1);
    const frame = gt06Encoder.encode([p!], { ...ctx, serial: 5 });
    const reply = decodeOne(frame).reply!;
    expect(gt06Encoder.isAck(reply, frame, 1)).toBe(true);
    expect(gt06Encoder.isAck(reply, gt06Encoder.encode([p!], { ...ctx, serial: 6 }), 1)).toBe(false);
    expect(gt06Encoder.isAck(reply, loginPacket(ctx.imei, 5), 0)).toBe(false);
  });
});
