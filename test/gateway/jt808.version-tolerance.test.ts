/**
 * Terminals that set the 2019 version bit (props bit 14) but send a 2013 header: when the
 * declared body length fits the content only with the 2013 header, the frame is decoded as
 * 2013 (and answered with a 2013 header) instead of refused with "message error" forever.
 */
import { describe, expect, it } from 'vitest';
import { xor8 } from '../../gateway/codec/crc.js';
import type { SessionInfo } from '../../gateway/protocol.js';
import { encodeMessage } from '../../gateway/protocols/jt808/ack.js';
import { escapeFrame, unescapeFrame } from '../../gateway/protocols/jt808/frame.js';
import { jt808 } from '../../gateway/protocols/jt808/index.js';
import { MSG_LOCATION, locationBody, phoneOf } from '../simulator/encoders/jt808.js';
import type { EncodeContext, SimPoint } from '../simulator/encoders/types.js';
import { refusal } from '../support/decoding.js';

const session: SessionInfo = { imei: null, model: null, timezoneMinutes: null, frameIndex: 1, now: Date.UTC(2026, 5, 1) };
const ctx: EncodeContext = { imei: '352098071234566', terminalId: '098071234566', serial: 0x0102 };
const point: SimPoint = {
  fixTime: Date.UTC(2026, 5, 1, 8, 30), lat: 31.2304, lng: 121.4737, speedKmh: 42, headingDeg: 90, altitudeM: 12, satellites: 9, ignition: true, odometerM: 1000,
};

function decodeOne(frame: Buffer) {
  const split = jt808.splitFrames(frame);
  expect(split.frames).toHaveLength(1);
  return jt808.decode(split.frames[0]!, session);
}

/** `frame` with props bit 14 set and its check code made right again: the 2019 bit on a 2013 header. */
function withVersionBit(frame: Buffer): Buffer {
  const content = unescapeFrame(frame).subarray(1, -1);
  const out = Buffer.from(content);
  out[2] = out[2]! | 0x40;
  out[out.length - 1] = xor8(out, 0, out.length - 1);
  return escapeFrame(out);
}

/** Props of a reply (0x8001 general response), read from its de-escaped bytes. */
function replyProps(reply: Buffer | null): number {
  expect(reply).not.toBeNull();
  return unescapeFrame(reply!).readUInt16BE(3);
}

describe('JT/T 808: 2019 version bit on a 2013 header', () => {
  it('decodes a hand-built location with the bit set exactly as the same frame without it', () => {
    const plain = encodeMessage(MSG_LOCATION, phoneOf(ctx), ctx.serial, locationBody(point, ctx));
    const flagged = withVersionBit(plain);
    expect(flagged.equals(plain)).toBe(false);

    const expected = decodeOne(plain);
    const decoded = decodeOne(flagged);
    expect(decoded.identity).toEqual({ terminalId: '98071234566' });
    expect(decoded.records).toEqual(expected.records);
    expect(decoded.records[0]).toMatchObject({ lat: expect.closeTo(31.2304, 6), lng: expect.closeTo(121.4737, 6), fixTime: point.fixTime });
    // Answered as it spoke: a 2013 header (no version bit, the 6-byte id).
    expect(replyProps(decoded.reply) & 0x4000).toBe(0);
    expect(decoded.reply!.equals(expected.reply!)).toBe(true);
  });

  it('keeps a real 2019 header 2019 (the length fits it)', () => {
    const phone2019 = Buffer.from('00000000098071234566', 'hex');
    const decoded = decodeOne(encodeMessage(MSG_LOCATION, phone2019, ctx.serial, locationBody(point, ctx), 1));
    expect(decoded.identity).toEqual({ terminalId: '98071234566' });
    expect(decoded.records).toHaveLength(1);
    expect(replyProps(decoded.reply) & 0x4000).toBe(0x4000);
  });

  it('still refuses a flagged frame whose length fits neither header', () => {
    const plain = encodeMessage(MSG_LOCATION, phoneOf(ctx), ctx.serial, locationBody(point, ctx));
    const content = Buffer.from(unescapeFrame(withVersionBit(plain)).subarray(1, -1));
    content.writeUInt16BE(0x4000 | ((content.readUInt16BE(2) & 0x3ff) + 2), 2); // two bytes more than there are
    content[content.length - 1] = xor8(content, 0, content.length - 1);
    const err = refusal(() => decodeOne(escapeFrame(content)));
    expect(err.code).toBe('bad_length');
    expect(err.reply).not.toBeNull();
  });

  // Two frames of real terminals, from the tests of SmallChi's C# JT808 library, which decodes
  // them with a forced-2013 option: an authentication and a location report, both with the
  // bit set and a 6-byte BCD id (010030000681).
  it('decodes the authentication of a real terminal', () => {
    const decoded = decodeOne(Buffer.from('7E0102400C01003000068109024A3130303330303030363831857E', 'hex'));
    expect(decoded.identity).toEqual({ terminalId: '10030000681' });
    expect(decoded.reply).not.toBeNull();
    const reply = unescapeFrame(decoded.reply!);
    expect(reply.readUInt16BE(1)).toBe(0x8001);
    expect(reply.subarray(5, 11).toString('hex')).toBe('010030000681');
    // Body: the terminal's serial 0x0902, message 0x0102, result 0 (success).
    expect(reply.subarray(13, 18).toString('hex')).toBe('0902010200');
  });

  it('decodes the location report of a real terminal', () => {
    const decoded = decodeOne(
      Buffer.from(
        '7e0200406c010030000681090e00000000000c0003026c936f074c794c0004036300d7210625155739010400000000052801cc00210625155739054145bbc91e' +
          '4145a2fa1141450000004145bbc8194145a1370a4145000000240200002a0200002b04000000003001153101125f0a89860418231870850620757e',
        'hex',
      ),
    );
    expect(decoded.identity).toEqual({ terminalId: '10030000681' });
    expect(decoded.records).toHaveLength(1);
    // lat 0x026c936f, lng 0x074c794c in 1e-6 degrees; speed 0x0363 in 0.1 km/h; 21-06-25 15:57:39 at UTC+8.
    expect(decoded.records[0]).toMatchObject({
      lat: expect.closeTo(40.670063, 6),
      lng: expect.closeTo(122.4523, 6),
      speedKmh: expect.closeTo(86.7, 6),
      headingDeg: 215,
      fixTime: Date.UTC(2021, 5, 25, 7, 57, 39),
    });
    expect(replyProps(decoded.reply) & 0x4000).toBe(0);
  });
});
