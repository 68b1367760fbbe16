/**
 * The simulator's JT/T 808 encoder against our decoder: what a terminal sends comes back
 * with the same values, the replies are the acks the terminal waits for, and the alarm
 * and active-safety rules hold.
 */
import { describe, expect, it } from 'vitest';
import type { DeviceAlarmKind } from '../../core/alarms.js';
import { luhnDigit } from '../../core/imei.js';
import { xor8 } from '../../gateway/codec/crc.js';
import type { SessionInfo } from '../../gateway/protocol.js';
import { encodeMessage } from '../../gateway/protocols/jt808/ack.js';
import { escapeFrame, splitFrames, unescapeFrame } from '../../gateway/protocols/jt808/frame.js';
import { imeiFromBinaryId } from '../../gateway/protocols/jt808/identity.js';
import { jt808 } from '../../gateway/protocols/jt808/index.js';
import {
  ENCODABLE_ALARMS,
  MAX_POINTS_PER_FRAME,
  MSG_LOCATION,
  authCodeOf,
  jt808Encoder,
  locationBody,
  phoneOf,
} from '../simulator/encoders/jt808.js';
import type { EncodeContext, SimPoint } from '../simulator/encoders/types.js';
import { Route } from '../simulator/route.js';

const ctx: EncodeContext = { imei: '352098071234566', terminalId: '098071234566', serial: 0x7e7d };
const session: SessionInfo = { imei: ctx.imei, model: null, timezoneMinutes: null, frameIndex: 0x7e, now: Date.UTC(2026, 5, 1) };

function route(n: number, opts: { seed?: number; lat?: number; lng?: number } = {}): SimPoint[] {
  const r = new Route({ seed: opts.seed ?? 5, startLat: opts.lat ?? 31.23, startLng: opts.lng ?? 121.47, startTime: Date.UTC(2026, 5, 1, 8) });
  return Array.from({ length: n }, () => r.next());
}

function decodeOne(frame: Buffer, s: SessionInfo = session) {
  const split = jt808.splitFrames(frame);
  expect(split.frames).toHaveLength(1);
  expect(split.consumed).toBe(frame.length);
  return jt808.decode(split.frames[0]!, s);
}

/** The body bytes of a de-escaped 2013 reply. */
function replyBody(reply: Buffer): Buffer {
  const bytes = unescapeFrame(reply);
  return bytes.subarray(13, -2);
}

describe('JT/T 808 encoder -> decoder', () => {
  it('registers, and the 0x8100 reply carries the auth code the simulator authenticates with', () => {
    const register = jt808Encoder.loginFrame(ctx, []);
    const registered = decodeOne(register!);
    expect(registered.identity).toEqual({ terminalId: '98071234566' });
    expect(registered.records).toHaveLength(0);
    expect(jt808Encoder.isAck(registered.reply!, register!, 0)).toBe(true);
    expect(jt808Encoder.isAck(registered.refuse!, register!, 0)).toBe(false);
    expect(replyBody(registered.reply!).subarray(3).toString('latin1')).toBe(authCodeOf(ctx));
    // The gateway hands out a code of its own through `accept`; the simulator authenticates with it.
    expect(registered.authentication?.step).toBe('register');
    const issued = registered.authentication?.step === 'register' ? registered.authentication.accept('a1b2c3d4e5f60718') : null;
    expect(jt808Encoder.isAck(issued!, register!, 0)).toBe(true);
    expect(jt808Encoder.issuedAuthCode(issued!)).toBe('a1b2c3d4e5f60718');
    const auth = jt808Encoder.loginFrame(ctx, [{ frame: register!, reply: issued! }]);

    const authenticated = decodeOne(auth!);
    expect(authenticated.authentication).toEqual({ step: 'authenticate', authCode: 'a1b2c3d4e5f60718' });
    // Authenticated: the dialog is over.
    expect(jt808Encoder.loginFrame(ctx, [{ frame: register!, reply: issued! }, { frame: auth!, reply: authenticated.reply! }])).toBeNull();
    expect(authenticated.identity).toEqual({ terminalId: '98071234566' });
    expect(jt808Encoder.isAck(authenticated.reply!, auth!, 0)).toBe(true);
    expect(jt808Encoder.isAck(authenticated.refuse!, auth!, 0)).toBe(false);
    // The reply to the registration is no ack for the authentication, and the other way round.
    expect(jt808Encoder.isAck(registered.reply!, auth!, 0)).toBe(false);
    expect(jt808Encoder.isAck(authenticated.reply!, register!, 0)).toBe(false);
  });

  it.each([1, 2, 5, MAX_POINTS_PER_FRAME])('round-trips %i point(s) per frame with the same values and a matching ack', (n) => {
    const points = route(n);
    const frame = jt808Encoder.encode(points, ctx);
    const decoded = decodeOne(frame);
    expect(decoded.records).toHaveLength(n);
    expect(jt808Encoder.isAck(decoded.reply!, frame, n)).toBe(true);
    decoded.records.forEach((r, i) => {
      const p = points[i]!;
      expect(r).toMatchObject({
        fixTime: p.fixTime,
        valid: true,
        lat: p.lat,
        lng: p.lng,
        speedKmh: p.speedKmh,
        headingDeg: p.headingDeg,
        altitudeM: p.altitudeM,
        satellites: p.satellites,
        ignition: p.ignition,
        // 0.1 km resolution on the wire.
        odometerM: Math.round(p.odometerM / 100) * 100,
      });
    });
  });

  it('keeps the signs of southern and western coordinates', () => {
    const points = route(3, { lat: -33.45, lng: -70.66 });
    const decoded = decodeOne(jt808Encoder.encode(points, ctx));
    expect(decoded.records.map((r) => [r.lat, r.lng])).toEqual(points.map((p) => [p.lat, p.lng]));
  });

  it('reads the device clock in GMT+8 unless the session says otherwise', () => {
    const [p] = route(1);
    const frame = jt808Encoder.encode([p!], ctx);
    expect(decodeOne(frame).records[0]!.fixTime).toBe(p!.fixTime);
    expect(decodeOne(frame, { ...session, timezoneMinutes: 0 }).records[0]!.fixTime).toBe(p!.fixTime + 8 * 3_600_000);
  });

  it.each(ENCODABLE_ALARMS.map((k) => [k]))('carries %s to the same alarm kind', (kind) => {
    const [p] = route(1);
    const frame = jt808Encoder.encode([{ ...p!, alarm: kind }], ctx);
    const record = decodeOne(frame).records[0]!;
    expect(record.alarms.map((a) => a.kind)).toEqual([kind]);
  });

  it('puts level, alarm id, flag and the 16-byte label of active-safety alarms in the details', () => {
    const [p] = route(1);
    const record = decodeOne(jt808Encoder.encode([{ ...p!, alarm: 'alarm.adas.collision' }], ctx)).records[0]!;
    const [alarm] = record.alarms;
    expect(alarm!.level).toBe(1);
    expect(alarm!.details).toMatchObject({ item: '0x64', alarm_id: ctx.serial, flag: 1, type: 1 });
    expect(String(alarm!.details!.label)).toMatch(/^[0-9a-f]{32}$/);
    expect(Buffer.from(String(alarm!.details!.label), 'hex').subarray(0, 7).toString('latin1')).toBe(ctx.terminalId.slice(-7));
    expect(record.attributes.adas_alarm_label).toBe(alarm!.details!.label);
  });

  it('carries ignition changes as status bit 0', () => {
    const [p, q] = route(2);
    const decoded = decodeOne(jt808Encoder.encode([{ ...p!, alarm: 'event.ignition_off' }, { ...q!, ignition: false, alarm: 'event.ignition_on' }], ctx));
    expect(decoded.records.map((r) => r.ignition)).toEqual([false, true]);
    expect(decoded.records.every((r) => r.alarms.length === 0)).toBe(true);
  });

  it('fits a full batch of alarm points in one body', () => {
    const kinds = ENCODABLE_ALARMS;
    const points = route(MAX_POINTS_PER_FRAME).map((p, i) => ({ ...p, alarm: kinds[i % kinds.length]! }));
    const decoded = decodeOne(jt808Encoder.encode(points, ctx));
    expect(decoded.records.map((r) => r.alarms[0]?.kind)).toEqual(points.map((p) => p.alarm));
  });
});

describe('JT/T 808 alarm rules', () => {
  const [point] = route(1);

  /** A 0x0200 frame of `point` with `patch` applied to its body. */
  function locationFrame(patch: (body: Buffer) => Buffer, alarm?: DeviceAlarmKind): Buffer {
    const body = locationBody(alarm ? { ...point!, alarm } : point!, ctx);
    return encodeMessage(MSG_LOCATION, phoneOf(ctx), ctx.serial, patch(body));
  }

  const withItem = (id: number, value: Buffer) => (body: Buffer) => Buffer.concat([body, Buffer.from([id, value.length]), value]);

  it('raises no new alarm for the end (flag 2) of an active-safety alarm', () => {
    const frame = locationFrame((body) => {
      body[37 + 2 + 4] = 2;
      return body;
    }, 'alarm.adas.lane_departure');
    const record = decodeOne(frame).records[0]!;
    expect(record.alarms).toEqual([]);
    expect(record.attributes.adas_alarm_flag).toBe(2);
  });

  it('does not read 0x64-0x67 as active safety from a known lock model, nor when the item is not the standard length', () => {
    const frame = jt808Encoder.encode([{ ...point!, alarm: 'alarm.bsd' }], ctx);
    const asLock = decodeOne(frame, { ...session, model: 'G-360P' }).records[0]!;
    expect(asLock.alarms).toEqual([]);
    expect(asLock.attributes.item_0x67).toMatch(/^[0-9a-f]{82}$/);
    // An e-lock's 8-byte 0x67 "password" (corpus #284) stays a raw item.
    const lock = decodeOne(locationFrame(withItem(0x67, Buffer.from('13214322', 'latin1')))).records[0]!;
    expect(lock.alarms).toEqual([]);
    expect(lock.attributes.item_0x67).toBe(Buffer.from('13214322', 'latin1').toString('hex'));
  });

  it('refuses an active-safety item whose flag or time is not valid', () => {
    const badFlag = decodeOne(
      locationFrame((body) => {
        body[37 + 2 + 4] = 7;
        return body;
      }, 'alarm.dsm.phone'),
    ).records[0]!;
    expect(badFlag.alarms).toEqual([]);
    expect(badFlag.attributes.item_0x65).toBeDefined();
  });

  it('maps JT/T 1078 item 0x18 bits 0/1 to DSM fatigue and phone', () => {
    const record = decodeOne(locationFrame(withItem(0x18, Buffer.from([0x00, 0x03, 0x02])))).records[0]!;
    expect(record.alarms.map((a) => a.kind).sort()).toEqual(['alarm.dsm.fatigue', 'alarm.dsm.phone']);
    expect(record.attributes.fatigue_level).toBe(2);
  });

  it('keeps one fatigue alarm when both the alarm bit and 0x65 type 1 report it, with the item details', () => {
    const frame = locationFrame((body) => {
      body.writeUInt32BE(0x04, 0);
      const item = Buffer.from(body.subarray(37));
      item[2 + 5] = 0x01; // DSM type 1: fatigue
      return Buffer.concat([body.subarray(0, 37), item]);
    }, 'alarm.dsm.phone');
    const alarms = decodeOne(frame).records[0]!.alarms;
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({ kind: 'alarm.dsm.fatigue', details: { item: '0x65', type: 1 } });
  });

  it('keeps collision (bit 29) and rollover (bit 30) warnings as attributes, not ADAS alarms', () => {
    const record = decodeOne(
      locationFrame((body) => {
        body.writeUInt32BE(((1 << 29) | (1 << 30)) >>> 0, 0);
        return body;
      }),
    ).records[0]!;
    expect(record.alarms).toEqual([]);
    expect(record.attributes).toMatchObject({ collision_warning: true, rollover_warning: true });
  });

  it('ignores the standard alarm bits on models that use them otherwise', () => {
    const frame = jt808Encoder.encode([{ ...point!, alarm: 'event.sos' }], ctx);
    expect(decodeOne(frame).records[0]!.alarms.map((a) => a.kind)).toEqual(['event.sos']);
    expect(decodeOne(frame, { ...session, model: 'G-360P' }).records[0]!.alarms).toEqual([]);
  });

  it('decodes standard items under our names and keeps unknown ones as hex', () => {
    const items = Buffer.concat([
      Buffer.from([0x02, 2, 0x01, 0xf4]), // fuel 50.0 L
      Buffer.from([0x12, 6, 1, 0, 0, 0, 9, 1]), // left area 9
      Buffer.from([0x30, 1, 25]),
      Buffer.from([0xeb, 9]),
      Buffer.from('UTC+03:00', 'latin1'),
      Buffer.from([0xaa, 2, 0xbe, 0xef]),
    ]);
    const decoded = decodeOne(locationFrame((body) => Buffer.concat([body, items])));
    const record = decoded.records[0]!;
    expect(record.attributes).toMatchObject({
      fuel_l: 50,
      area_id: 9,
      area_direction: 'out',
      rssi: 25,
      timezone: 'UTC+03:00',
      item_0xaa: 'beef',
    });
    // The stated zone applies to the record (the encoder wrote GMT+8 time) and is announced for later frames.
    expect(record.fixTime).toBe(point!.fixTime + 5 * 3_600_000);
    expect(decoded.announcedTimezoneMinutes).toBe(180);
  });

  it('reports a location without a fix at 0/0 as no location', () => {
    const record = decodeOne(
      locationFrame((body) => {
        body.writeUInt32BE(0, 4);
        body.fill(0, 8, 16);
        return body;
      }),
    ).records[0]!;
    expect(record).toMatchObject({ valid: false, lat: null, lng: null });
  });

  it('keeps a record with a garbled clock at arrival time, marked invalid', () => {
    const record = decodeOne(
      locationFrame((body) => {
        body[23] = 0x13; // month 13
        return body;
      }),
    ).records[0]!;
    expect(record).toMatchObject({ fixTime: session.now, valid: false });
    expect(record.attributes.device_time_invalid).toBeDefined();
  });
});

describe('JT/T 808 headers and identities', () => {
  it('answers a 2019 header in kind: version byte and 10-byte id echoed', () => {
    const [p] = route(1);
    const phone = Buffer.from('00000139123456789012', 'hex');
    const frame = encodeMessage(MSG_LOCATION, phone, 5, locationBody(p!, ctx), 1);
    const decoded = decodeOne(frame);
    expect(decoded.identity).toEqual({ terminalId: '139123456789012' });
    expect(decoded.records[0]!.fixTime).toBe(p!.fixTime);
    const reply = unescapeFrame(decoded.reply!);
    expect(reply.readUInt16BE(3)).toBe(0x4005);
    expect(reply[5]).toBe(1);
    expect(reply.subarray(6, 16).equals(phone)).toBe(true);
  });

  it('takes the IMEI from a 2019 authentication', () => {
    const phone = Buffer.from('00000139123456789012', 'hex');
    const body = Buffer.concat([Buffer.from([4]), Buffer.from('code'), Buffer.from('868935060005020'), Buffer.alloc(20)]);
    const decoded = decodeOne(encodeMessage(0x0102, phone, 1, body, 1));
    expect(decoded.identity).toEqual({ terminalId: '139123456789012', imei: '868935060005020' });
  });

  it('rebuilds the IMEI from a binary terminal id', () => {
    const imei = '868935060005020';
    expect(luhnDigit(imei.slice(0, 14))).toBe(0);
    const id = Buffer.alloc(6);
    id.writeUIntBE(Number(imei.slice(0, 14)), 0, 6);
    expect(imeiFromBinaryId(id)).toBe(imei);
    const decoded = decodeOne(encodeMessage(0x0002, id, 1, Buffer.alloc(0)));
    expect(decoded.identity).toEqual({ imei });
  });

  it('answers subpackaged and unknown messages with 0x8001 "unsupported"', () => {
    // Header by hand: props with bit 13 (subpackaged), then packet count and index.
    const phone = phoneOf(ctx);
    const content = Buffer.concat([Buffer.from([0x08, 0x01, 0x20, 0x02]), phone, Buffer.from([0x00, 0x09, 0x00, 0x03, 0x00, 0x01, 0xaa, 0xbb])]);
    const frame = escapeFrame(Buffer.concat([content, Buffer.from([xor8(content)])]));
    const sub = decodeOne(frame);
    expect(sub.ignoredReason).toMatch(/packet 1\/3/);
    expect(replyBody(sub.reply!).toString('hex')).toBe('0009080103');
    const unknown = decodeOne(encodeMessage(0x0a0b, phone, 4, Buffer.from([1])));
    expect(unknown.ignoredReason).toMatch(/unsupported message 0x0a0b/);
    expect(replyBody(unknown.reply!).toString('hex')).toBe('00040a0b03');
  });
});

describe('JT/T 808 simulator reply handling', () => {
  it('cuts one escaped reply at a time, dropping junk and lone delimiters, and waits for a partial one', () => {
    const [p] = route(1);
    const frame = jt808Encoder.encode([p!], ctx);
    const reply = decodeOne(frame).reply!;
    const stream = Buffer.concat([Buffer.from('ff7e', 'hex'), reply, reply.subarray(0, 5)]);
    const first = jt808Encoder.takeReply(stream)!;
    expect(first.reply.equals(reply)).toBe(true);
    expect(first.consumed).toBe(2 + reply.length);
    expect(jt808Encoder.takeReply(stream.subarray(first.consumed))).toBeNull();
  });

  it('takes a 0x8203 alarm confirmation aside, as a unit does, and hands over the reply after it', () => {
    const frame = jt808Encoder.encode([{ ...route(1)[0]!, alarm: 'event.sos' }], ctx);
    const [ack, confirmation] = splitFrames(decodeOne(frame).reply!).frames;
    expect(unescapeFrame(confirmation!).readUInt16BE(1)).toBe(0x8203);
    const stream = Buffer.concat([confirmation!, ack!]);
    const taken = jt808Encoder.takeReply(stream)!;
    expect(taken).toEqual({ reply: ack, consumed: stream.length });
    expect(jt808Encoder.isAck(taken.reply, frame, 1)).toBe(true);
    expect(jt808Encoder.takeReply(confirmation!)).toBeNull();
  });

  it('rejects replies for another serial, another message, a failure result or a bad check code', () => {
    const [p] = route(1);
    const frame = jt808Encoder.encode([p!], ctx);
    const ok = decodeOne(frame).reply!;
    expect(jt808Encoder.isAck(ok, frame, 1)).toBe(true);
    const otherSerial = jt808Encoder.encode([p!], { ...ctx, serial: ctx.serial + 1 });
    expect(jt808Encoder.isAck(ok, otherSerial, 1)).toBe(false);
    const failed = decodeOne(frame).refuse;
    expect(failed).toBeUndefined();
    const bytes = unescapeFrame(ok);
    bytes[bytes.length - 3] = 1; // result: failure
    bytes[bytes.length - 2] = xor8(bytes, 1, bytes.length - 2);
    expect(jt808Encoder.isAck(escapeFrame(bytes, 1, bytes.length - 1), frame, 1)).toBe(false);
    const corrupt = Buffer.from(ok);
    corrupt[corrupt.length - 2] = corrupt[corrupt.length - 2]! ^ 0x55;
    expect(jt808Encoder.isAck(corrupt, frame, 1)).toBe(false);
  });
});
