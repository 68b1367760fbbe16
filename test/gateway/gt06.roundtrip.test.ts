/** The simulator's GT06 unit against our decoder: what the unit encodes is what we decode, and the replies are what it expects. */
import { describe, expect, it } from 'vitest';
import type { DeviceAlarmKind } from '../../core/alarms.js';
import { crc16X25 } from '../../gateway/codec/crc.js';
import { DecodeError } from '../../gateway/codec/reader.js';
import type { SessionInfo } from '../../gateway/protocol.js';
import { shortPacket } from '../../gateway/protocols/gt06/ack.js';
import { decode, timezoneOf } from '../../gateway/protocols/gt06/decode.js';
import { ENCODABLE_ALARMS, gt06Encoder, loginPacket } from '../simulator/encoders/gt06.js';
import type { SimPoint } from '../simulator/encoders/types.js';
import { Route } from '../simulator/route.js';

const NOW = Date.UTC(2026, 6, 1, 12, 0, 0);
const IMEI = '352098071234566';
const session = (over: Partial<SessionInfo> = {}): SessionInfo => ({ imei: IMEI, model: null, timezoneMinutes: null, frameIndex: 0, now: NOW, ...over });
const ctx = (serial: number) => ({ imei: IMEI, terminalId: IMEI.slice(3), serial });

function points(n: number, startLat = 56.95, startLng = 24.1): SimPoint[] {
  const route = new Route({ seed: 3, startLat, startLng, startTime: Date.UTC(2026, 2, 1, 6) });
  return Array.from({ length: n }, () => route.next());
}

describe('GT06 round trip', () => {
  it('logs in with the IMEI, announces UTC and gets the echo the unit expects', () => {
    const frame = loginPacket(IMEI, 7);
    const decoded = decode(frame, session({ imei: null }));
    expect(decoded.identity).toEqual({ imei: IMEI });
    expect(decoded.announcedTimezoneMinutes).toBe(0);
    const reply = decoded.reply!;
    expect(reply.subarray(0, 6).toString('hex')).toBe('787805010007');
    expect(reply.subarray(8).toString('hex')).toBe('0d0a');
    expect(reply.readUInt16BE(6)).toBe(crc16X25(reply, 2, 6));
    expect(gt06Encoder.isAck(reply, frame, 0)).toBe(true);
  });

  it('reads the login time-zone field: zone x 100 in bits 15-4, bit 3 west', () => {
    expect(timezoneOf(800 << 4)).toBe(480);
    expect(timezoneOf((800 << 4) | 0x08)).toBe(-480);
    expect(timezoneOf(530 << 4)).toBe(330);
    expect(timezoneOf(0x0002)).toBe(0); // language bits only
  });

  it.each([
    ['north-east', 56.95, 24.1],
    ['south-west', -34.6, -58.4],
  ])('decodes every value of %s points as sent', (_where, lat, lng) => {
    points(50, lat, lng).forEach((p, i) => {
      const frame = gt06Encoder.encode([p], ctx(i + 2));
      const decoded = decode(frame, session());
      expect(decoded.records).toHaveLength(1);
      const r = decoded.records[0]!;
      expect(r.fixTime).toBe(Math.floor(p.fixTime / 1000) * 1000);
      expect(r.lat!).toBeCloseTo(p.lat, 5);
      expect(r.lng!).toBeCloseTo(p.lng, 5);
      expect(r.speedKmh).toBe(Math.min(255, Math.round(p.speedKmh)));
      expect(r.headingDeg).toBe(Math.round(p.headingDeg) % 360);
      expect(r.satellites).toBe(Math.min(15, p.satellites));
      expect(r.valid).toBe(true);
      if (!p.alarm) {
        expect(r.ignition).toBe(p.ignition);
        expect(r.odometerM).toBe(Math.round(p.odometerM));
      }
      expect(gt06Encoder.isAck(decoded.reply!, frame, 1)).toBe(true);
    });
  });

  it.each(ENCODABLE_ALARMS.map((k) => [k]))('carries %s to the same alarm kind', (kind: DeviceAlarmKind) => {
    const [p] = points(1);
    const decoded = decode(gt06Encoder.encode([{ ...p!, alarm: kind }], ctx(3)), session());
    expect(decoded.records[0]!.alarms.map((a) => a.kind)).toEqual([kind]);
  });

  it('raises no alarm for a plain point', () => {
    const [p] = points(1);
    expect(decode(gt06Encoder.encode([p!], ctx(3)), session()).records[0]!.alarms).toEqual([]);
  });

  it('reads device times in the session zone', () => {
    const frame = gt06Encoder.encode(points(1), ctx(4));
    const utc = decode(frame, session()).records[0]!.fixTime;
    expect(decode(frame, session({ timezoneMinutes: 480 })).records[0]!.fixTime).toBe(utc - 8 * 3_600_000);
  });

  it('refuses a packet whose CRC does not match, with no reply', () => {
    const frame = Buffer.from(gt06Encoder.encode(points(1), ctx(5)));
    frame[10] = frame[10]! ^ 0x01;
    let err: unknown;
    try {
      decode(frame, session());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).code).toBe('bad_checksum');
    expect((err as DecodeError).reply).toBeNull();
  });

  it('answers a time request with the server clock in UTC and stores nothing', () => {
    const decoded = decode(shortPacket(0x8a, 0x0102), session());
    const reply = decoded.reply!;
    // 2026-07-01 12:00:00 as YY MM DD hh mm ss.
    expect(reply.subarray(0, 10).toString('hex')).toBe('78780b8a1a07010c0000');
    expect(reply.readUInt16BE(10)).toBe(0x0102);
    expect(reply.readUInt16BE(12)).toBe(crc16X25(reply, 2, 12));
    expect(reply.subarray(14).toString('hex')).toBe('0d0a');
    expect(decoded.records).toHaveLength(0);
  });
});
