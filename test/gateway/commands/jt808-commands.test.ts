/**
 * JT/T 808 commands on bytes: the messages the encoder writes against frames published by
 * Traccar, other JT/T 808 implementations and vendor documents; the terminal's answers
 * (0x0001, 0x0201, 0x1300) decoded into CommandReply; the 0x8203 confirmation of latched
 * alarms; the standard's growing retransmission timeout.
 */
import { describe, expect, it } from 'vitest';
import { xor8 } from '../../../gateway/codec/crc.js';
import { CommandEncodeError, type CommandContext, type WireCommand } from '../../../gateway/protocol.js';
import { escapeFrame, unescapeFrame } from '../../../gateway/protocols/jt808/frame.js';
import { jt808, retransmitTimeoutMs } from '../../../gateway/protocols/jt808/index.js';
import { gbkBytes, gbkText } from '../../../gateway/protocols/jt808/text.js';
import { COMMAND_SESSION, expectWholeAtEveryCut, fuzzDecoder } from '../../support/command-frames.js';
import { loadFrames } from '../../support/conformance.js';
import { terminalMessage } from '../../support/jt808-message.js';
import { thrown } from '../../support/thrown.js';

const hex = (b: Buffer) => b.toString('hex');
const bytes = (h: string) => Buffer.from(h, 'hex');
const encode = (cmd: WireCommand, ctx: CommandContext) => jt808.encodeCommand(cmd, ctx);
/** Traccar's test device: unique id 123456789012345, sent as the binary IMEI id 0b3a73ce2ff2, serial 0. */
const TRACCAR: CommandContext = { imei: '123456789012345', terminalId: null, serial: 0 };
const corpus = loadFrames('jt808');

/** The de-escaped header and body of a frame, for field checks: id, props, [version,] phone, serial, body. */
function parts(frame: Buffer): { msgId: number; props: number; version: number | null; phone: string; serial: number; body: Buffer } {
  const content = unescapeFrame(frame).subarray(1, -1);
  expect(xor8(content)).toBe(0); // the check code closes the XOR
  const is2019 = (content.readUInt16BE(2) & 0x4000) !== 0;
  const phoneAt = is2019 ? 5 : 4;
  const phoneLength = is2019 ? 10 : 6;
  const serialAt = phoneAt + phoneLength;
  const body = content.subarray(serialAt + 2, -1);
  expect(content.readUInt16BE(2) & 0x3ff).toBe(body.length);
  return {
    msgId: content.readUInt16BE(0),
    props: content.readUInt16BE(2),
    version: is2019 ? content[4]! : null,
    phone: hex(content.subarray(phoneAt, serialAt)),
    serial: content.readUInt16BE(serialAt),
    body,
  };
}

describe('JT/T 808 command encoder', () => {
  it('writes the frames of Traccar\'s encoder tests through custom hex and custom text', () => {
    // traccar/traccar src/test/java/org/traccar/protocol/Jt808ProtocolEncoderTest.java, testEncode: the engine stop
    // of its default model (0x8105 vendor word 0xF0) and the BSJ text command (0x8300, flag 1); testEncodeJimiCustom: 0x8900.
    expect(hex(encode({ type: 'custom', hex: '8105f0' }, TRACCAR).bytes)).toBe('7e810500010b3a73ce2ff20000f0247e');
    expect(hex(encode({ type: 'custom', text: 'Test, Command, 123#' }, TRACCAR).bytes)).toBe(
      '7e830000140b3a73ce2ff2000001546573742c20436f6d6d616e642c2031323323a57e',
    );
    expect(hex(encode({ type: 'custom', hex: '8900f054455354' }, TRACCAR).bytes)).toBe('7e890000050b3a73ce2ff20000f0544553543b7e');
  });

  it('writes the position query of Traccar and of go-jt808', () => {
    // Traccar's Jt808ProtocolEncoderTest (TYPE_POSITION_SINGLE, in its later versions).
    expect(hex(encode({ type: 'position_request' }, TRACCAR).bytes)).toBe('7e820100000b3a73ce2ff20000d27e');
    // cuteLittleDevil/go-jt808 protocol model tests, "P0x8201": terminal 001256256927, serial 0x000f.
    expect(hex(encode({ type: 'position_request' }, { imei: null, terminalId: '1256256927', serial: 15 }).bytes)).toBe(
      '7e82010000001256256927000fa37e',
    );
  });

  it('sets the report interval as parameter 0x0029 (DWORD s), as hylexus/jt-framework\'s encoder test frames it', () => {
    // hylexus/jt-framework EncoderTest.test2: one parameter 0x0029 = 100 s, terminal 013184610090, serial 7.
    const ctx: CommandContext = { imei: null, terminalId: '13184610090', serial: 7 };
    const { bytes: frame, matchKey } = encode({ type: 'set_report_interval', intervalS: 100 }, ctx);
    expect(hex(frame)).toBe('7e8103000a013184610090000701000000290400000064827e');
    expect(matchKey).toBe(7);
  });

  it('frames custom messages like SmallChi/JT808\'s serializer tests', () => {
    // SmallChi/JT808 JT808_0x8105Test (command word 5, terminal 012345678900) and JT808_0x8103Test
    // (parameter 0x0001 = 10, terminal 000123456789).
    const ctx: CommandContext = { imei: null, terminalId: '12345678900', serial: 1 };
    expect(hex(encode({ type: 'custom', hex: '810505' }, ctx).bytes)).toBe('7e81050001012345678900000105087e');
    expect(hex(encode({ type: 'custom', hex: '81030100000001040000000a' }, { ...ctx, terminalId: '123456789', serial: 10 }).bytes)).toBe(
      '7e8103000a000123456789000a0100000001040000000a057e',
    );
  });

  it('reboots with 0x8105 command word 4 and controls the engine with 0x8500', () => {
    const ctx: CommandContext = { imei: null, terminalId: '13912344323', serial: 0x7e7d }; // a serial that needs escaping
    const reboot = parts(encode({ type: 'reboot' }, ctx).bytes);
    expect([reboot.msgId, reboot.phone, reboot.serial, hex(reboot.body)]).toEqual([0x8105, '013912344323', 0x7e7d, '04']);
    expect(hex(parts(encode({ type: 'engine_stop', text: 'ignored' }, ctx).bytes).body)).toBe('01');
    expect(parts(encode({ type: 'engine_resume', text: 'ignored' }, ctx).bytes).msgId).toBe(0x8500);
    expect(hex(parts(encode({ type: 'engine_resume', text: 'ignored' }, ctx).bytes).body)).toBe('00');
  });

  it('writes driver texts in GBK, as go-jt808\'s 0x8300 test encodes them', () => {
    // cuteLittleDevil/go-jt808 "P0x8300": flag ff · GBK "测试123@456#abc+结束".
    const published = bytes('7e830000150012562569271108ffb2e2cad431323340343536236162632bbde1caf8507e');
    const publishedText = unescapeFrame(published).subarray(14, -2);
    expect(hex(gbkBytes('测试123@456#abc+结束')!)).toBe(hex(publishedText));
    const ours = parts(encode({ type: 'text', message: '测试123@456#abc+结束' }, { imei: null, terminalId: '1256256927', serial: 0x1108 }).bytes);
    expect(ours.body[0]).toBe(0x0c); // terminal display + TTS
    expect(hex(ours.body.subarray(1))).toBe(hex(publishedText));
    expect(gbkText(ours.body, 1, ours.body.length)).toBe('测试123@456#abc+结束');
  });

  it('writes SmallChi/JT808\'s 0x8300 frames in both header forms, and the same body layout for a driver text', () => {
    // SmallChi/JT808 JT808_0x8300Test: Test1 (2013) and Test_2019_1 (version 1): flag 5, [text type 1,] "smallchi 518".
    const text = Buffer.from('smallchi 518').toString('hex');
    const ctx: CommandContext = { imei: null, terminalId: '12345678900', serial: 1 };
    expect(hex(encode({ type: 'custom', hex: `830005${text}` }, ctx).bytes)).toBe('7e8300000d012345678900000105736d616c6c63686920353138027e');
    const in2019: CommandContext = { ...ctx, protocolVersion: 1 };
    expect(hex(encode({ type: 'custom', hex: `83000501${text}` }, in2019).bytes)).toBe(
      '7e8300400e010000000001234567890000010501736d616c6c63686920353138417e',
    );
    expect(hex(parts(encode({ type: 'text', message: 'smallchi 518' }, in2019).bytes).body)).toBe(`0c01${text}`);
  });

  it('uses the 2019 header when ctx.protocolVersion is set: version byte, BCD[10] id, and the 2019 bodies', () => {
    const ctx: CommandContext = { imei: null, terminalId: '17299841738', serial: 0xffff, protocolVersion: 1 };
    const text = parts(encode({ type: 'text', message: 'Hi' }, ctx).bytes);
    expect([text.props & 0x4000, text.version, text.phone, text.serial]).toEqual([0x4000, 1, '00000000017299841738', 0xffff]);
    expect(hex(text.body)).toBe('0c014869'); // flag · text type 1 (notice) · text
    // 0x8500 in 2019: count WORD · (control type WORD · parameter BYTE), the layout of SmallChi/JT808's
    // JT808_0x8500Test.Test_2019_1 (`0002 0001 00 F001 01`); ours has the one type 0x0001.
    expect(hex(parts(encode({ type: 'engine_stop', text: '' }, ctx).bytes).body)).toBe('0001000101');
    // A 2019 unit known by its IMEI only: the IMEI's digits are its id.
    expect(parts(encode({ type: 'reboot' }, { imei: '868120303960873', terminalId: null, serial: 1, protocolVersion: 1 }).bytes).phone).toBe(
      '00000868120303960873',
    );
  });

  it('tells the gateway the header form a terminal uses, for the commands it sends back', () => {
    const report2013 = terminalMessage(0x0200, '013912344323', 1, locationBody(0));
    const report2019 = terminalMessage(0x0200, '00000000017299841738', 1, locationBody(0), 1);
    expect(jt808.decode(report2013, COMMAND_SESSION).protocolVersion).toBeNull();
    const version = jt808.decode(report2019, COMMAND_SESSION).protocolVersion;
    expect(version).toBe(1);
    const command = parts(encode({ type: 'reboot' }, { imei: null, terminalId: '17299841738', serial: 2, protocolVersion: version }).bytes);
    expect([command.version, command.phone]).toEqual([1, '00000000017299841738']);
  });

  it('round-trips through the framer and decoder: the id, serial and check code hold', () => {
    const ctx: CommandContext = { imei: null, terminalId: '13912344323', serial: 0x7d7e };
    for (const cmd of [{ type: 'reboot' }, { type: 'text', message: '前方拥堵 ~}' }] as const) {
      const frame = encode(cmd, ctx).bytes;
      expect(jt808.splitFrames(frame).frames.map(hex)).toEqual([hex(frame)]);
      const decoded = jt808.decode(frame, COMMAND_SESSION);
      expect(decoded.identity).toEqual({ terminalId: '13912344323' });
      expect(decoded.ignoredReason).toMatch(/^unsupported message 0x8(105|300)$/); // a platform message: we do not take it, but it is well formed
    }
  });

  it('frames each new frame whole wherever TCP cuts it', () => {
    const ctx: CommandContext = { imei: null, terminalId: '13912344323', serial: 0x7e7e };
    for (const cmd of [{ type: 'reboot' }, { type: 'set_report_interval', intervalS: 0x7d7e }, { type: 'text', message: '你好' }] as const) {
      expectWholeAtEveryCut(jt808, encode(cmd, ctx).bytes);
    }
    // The answers and the 0x8203 too.
    expectWholeAtEveryCut(jt808, bytes('7e000100051050451339131db5005c920800567e'));
    expectWholeAtEveryCut(jt808, bytes('7e0201001e0123456789017fff686200002a5a000074280000a3e50000db4fbc732711012c2005121212595b7e'));
    const sos = jt808.decode(terminalMessage(0x0200, '013912344323', 0x7e7d, locationBody(1)), COMMAND_SESSION).reply!;
    for (const frame of jt808.splitFrames(sos).frames) expectWholeAtEveryCut(jt808, Buffer.from(frame));
  });

  it('refuses what it cannot carry with a CommandEncodeError', () => {
    const ctx: CommandContext = { imei: null, terminalId: '13912344323', serial: 1 };
    const refused = (cmd: WireCommand, c = ctx) => thrown(CommandEncodeError, () => encode(cmd, c)).code;
    expect(refused({ type: 'text', message: '' })).toBe('invalid');
    expect(refused({ type: 'text', message: '😀' })).toBe('invalid'); // outside GBK
    expect(refused({ type: 'text', message: 'x'.repeat(1023) })).toBe('invalid'); // body over 1023 bytes
    expect(refused({ type: 'custom', hex: '81' })).toBe('invalid');
    expect(refused({ type: 'custom', hex: '8105f' })).toBe('invalid');
    expect(refused({ type: 'set_report_interval', intervalS: 0 })).toBe('invalid');
    expect(refused({ type: 'reboot' }, { imei: null, terminalId: null, serial: 1 })).toBe('invalid');
    expect(refused({ type: 'reboot' }, { imei: null, terminalId: '1234567890123', serial: 1 })).toBe('invalid');
  });
});

describe('JT/T 808 command replies', () => {
  it('decodes 0x0001 into the answered serial and the result (vendor document and go-jt808 samples)', () => {
    // MettaX DashCam Protocol v1.9.0.1, 2.1 Terminal General Response: answers serial 0x005c (a 0x9208), result 0.
    const mettax = bytes('7e000100051050451339131db5005c920800567e');
    expect(jt808.decode(mettax, COMMAND_SESSION).replies).toEqual([
      { matchKey: 0x005c, outcome: 'succeeded', text: null, resultCode: 0, raw: mettax },
    ]);
    // cuteLittleDevil/go-jt808 "T0x0001": answers serial 123 (id 0x01c8), result 3.
    const goJt808 = bytes('7e000100050123456789017fff007b01c803bd7e');
    const decoded = jt808.decode(goJt808, COMMAND_SESSION);
    expect(decoded.replies).toEqual([{ matchKey: 123, outcome: 'unsupported', text: null, resultCode: 3, raw: goJt808 }]);
    expect(decoded.reply).toBeNull(); // a terminal's answer is not answered
    expect(decoded.records).toEqual([]);
  });

  it.each([
    [0, 'succeeded'],
    [1, 'failed'],
    [2, 'bad_message'],
    [3, 'unsupported'],
    [9, 'failed'],
  ] as const)('0x0001 result %i is %s', (result, outcome) => {
    const ctx: CommandContext = { imei: null, terminalId: '13912344323', serial: 0x0042 };
    const command = parts(encode({ type: 'reboot' }, ctx).bytes);
    const answer = terminalMessage(0x0001, '013912344323', 0x0100, Buffer.from([0x00, 0x42, 0x81, 0x05, result]));
    expect(jt808.decode(answer, COMMAND_SESSION).replies[0]).toMatchObject({ matchKey: command.serial, outcome, resultCode: result });
  });

  it('gives no reply for a 0x0001 that answers our alarm confirmation (0x8203)', () => {
    const answer = terminalMessage(0x0001, '013912344323', 0x0101, Buffer.from([0x00, 0x07, 0x82, 0x03, 0x00]));
    expect(jt808.decode(answer, COMMAND_SESSION).replies).toEqual([]);
  });

  it('decodes go-jt808\'s 0x0201 into a reply for serial 26722 and keeps its location as a record', () => {
    const frame = bytes('7e0201001e0123456789017fff686200002a5a000074280000a3e50000db4fbc732711012c2005121212595b7e');
    const decoded = jt808.decode(frame, COMMAND_SESSION);
    expect(decoded.replies).toEqual([{ matchKey: 26722, outcome: 'succeeded', text: null, resultCode: null, raw: frame }]);
    expect(decoded.records).toHaveLength(1);
    expect(decoded.records[0]!.fixTime).toBe(Date.UTC(2020, 4, 12, 4, 12, 59)); // 2020-05-12 12:12:59 GMT+8
    expect(decoded.records[0]!.lat).toBeCloseTo(0.041957, 6);
    expect(decoded.reply).toBeNull();
  });

  it('decodes a 0x0500 vehicle control answer like 0x0201: a reply and the location', () => {
    const location = unescapeFrame(bytes('7e0201001e0123456789017fff686200002a5a000074280000a3e50000db4fbc732711012c2005121212595b7e')).subarray(13, -2);
    const frame = terminalMessage(0x0500, '012345678901', 0x0001, location);
    const decoded = jt808.decode(frame, COMMAND_SESSION);
    expect(decoded.replies.map((r) => [r.matchKey, r.outcome])).toEqual([[26722, 'succeeded']]);
    expect(decoded.records).toHaveLength(1);
  });

  it('decodes corpus #311, the 0x1300 "Set OK!" text answer, as succeeded for serial 0', () => {
    const f = corpus.find((x) => x.index === 311)!;
    const frame = bytes(f.hex);
    const decoded = jt808.decode(frame, COMMAND_SESSION);
    expect(decoded.replies).toEqual([{ matchKey: 0, outcome: 'succeeded', text: f.expect!.attributes!.result, resultCode: null, raw: frame }]);
    expect(decoded.records).toEqual([]);
    expect(parts(decoded.reply!).msgId).toBe(0x8001); // acked as before
  });

  it('throws only DecodeError on mutated and truncated answers', () => {
    const seeds = [
      bytes('7e000100051050451339131db5005c920800567e'),
      bytes('7e0201001e0123456789017fff686200002a5a000074280000a3e50000db4fbc732711012c2005121212595b7e'),
      bytes(corpus.find((x) => x.index === 311)!.hex),
    ];
    expect(fuzzDecoder(jt808, seeds, withFixedCheck)).toBeGreaterThan(0);
  });
});

describe('JT/T 808 latched alarms: 0x8203 after the 0x8001', () => {
  it('confirms corpus #333\'s emergency bit: answered serial 0x000a, alarm type 1', () => {
    const f = corpus.find((x) => x.index === 333)!;
    const session = { ...COMMAND_SESSION, frameIndex: 5 };
    const replies = jt808.splitFrames(jt808.decode(bytes(f.hex), session).reply!).frames.map((x) => parts(x));
    expect(replies.map((r) => r.msgId)).toEqual([0x8001, 0x8203]);
    expect(hex(replies[1]!.body)).toBe('000a00000001');
    expect([replies[1]!.phone, replies[1]!.serial]).toEqual(['094027587492', 5]);
  });

  it('writes the vendor document\'s 0x8203 for an SOS report', () => {
    // MettaX DashCam Protocol v1.9.0.1, 5.2 Manual Confirmation: terminal 940077861156, platform serial 0x3040,
    // confirming report serial 0x0043, type 00000001 (SOS).
    const report = terminalMessage(0x0200, '940077861156', 0x0043, locationBody(0x00000001));
    const reply = jt808.decode(report, { ...COMMAND_SESSION, frameIndex: 0x3040 }).reply!;
    expect(jt808.splitFrames(reply).frames.map(hex)[1]).toBe('7e820300069400778611563040004300000001977e');
  });

  it('confirms only the latched bits (0, 3, 20, 21, 22, 27, 28), and nothing when none is set', () => {
    const confirmed = (flags: number) => {
      const reply = jt808.decode(terminalMessage(0x0200, '013912344323', 9, locationBody(flags)), COMMAND_SESSION).reply!;
      const frames = jt808.splitFrames(reply).frames.map((x) => parts(x));
      return frames.length === 1 ? null : frames[1]!.body.readUInt32BE(2);
    };
    expect(confirmed(0)).toBeNull();
    expect(confirmed((1 << 1) | (1 << 2) | (1 << 8))).toBeNull(); // overspeed, fatigue, power: kept until the condition ends
    expect(confirmed(0xffffffff)).toBe(0x18700009);
    expect(confirmed((1 << 1) | (1 << 20))).toBe(1 << 20);
  });

  it('confirms a 0x0704 batch once, for every latched bit of its entries', () => {
    const entries = [locationBody(1 << 3), locationBody(1 << 27), locationBody(0)];
    const body = Buffer.concat([Buffer.from([0, entries.length, 0]), ...entries.flatMap((e) => [Buffer.from([0, e.length]), e])]);
    const reply = jt808.decode(terminalMessage(0x0704, '013912344323', 0x0077, body), COMMAND_SESSION).reply!;
    const frames = jt808.splitFrames(reply).frames.map((x) => parts(x));
    expect(frames.map((r) => r.msgId)).toEqual([0x8001, 0x8203]);
    expect(hex(frames[1]!.body)).toBe(`0077${((1 << 3) | (1 << 27)).toString(16).padStart(8, '0')}`);
  });

  it('answers a 2019 terminal in its own header form', () => {
    const report = terminalMessage(0x0200, '00000000017299841738', 3, locationBody(1), 1);
    const frames = jt808.splitFrames(jt808.decode(report, COMMAND_SESSION).reply!).frames.map((x) => parts(x));
    expect(frames.map((r) => [r.msgId, r.version, r.phone])).toEqual([
      [0x8001, 1, '00000000017299841738'],
      [0x8203, 1, '00000000017299841738'],
    ]);
  });

  it('confirms nothing for models whose alarm bits mean something else', () => {
    const report = terminalMessage(0x0200, '013912344323', 9, locationBody(1));
    expect(jt808.splitFrames(jt808.decode(report, { ...COMMAND_SESSION, model: 'G-360P' }).reply!).frames).toHaveLength(1);
  });
});

describe('JT/T 808 retransmission timeout', () => {
  it('grows as T(n+1) = T(n) x (n+1) from the base', () => {
    expect([1, 2, 3, 4, 5].map((n) => retransmitTimeoutMs(n, 10_000))).toEqual([10_000, 20_000, 60_000, 240_000, 1_200_000]);
  });

  it('refuses attempts below 1 and bases that are not positive', () => {
    expect(() => retransmitTimeoutMs(0, 1000)).toThrow(RangeError);
    expect(() => retransmitTimeoutMs(1.5, 1000)).toThrow(RangeError);
    expect(() => retransmitTimeoutMs(1, 0)).toThrow(RangeError);
  });
});

/** A 0x0200 location body: alarm flags, status (fix valid), a point, and a BCD time. */
function locationBody(alarmFlags: number): Buffer {
  const body = Buffer.alloc(28);
  body.writeUInt32BE(alarmFlags >>> 0, 0);
  body.writeUInt32BE(0x02, 4);
  body.writeUInt32BE(22_500_000, 8);
  body.writeUInt32BE(114_000_000, 12);
  bytes('260101120000').copy(body, 22);
  return body;
}

/** Recomputes the check code of a (possibly cut) frame so the mutated body reaches the message parser. */
function withFixedCheck(frame: Buffer): Buffer {
  if (frame.length < 4 || frame[0] !== 0x7e || frame[frame.length - 1] !== 0x7e) return frame;
  try {
    const content = Buffer.from(unescapeFrame(frame).subarray(1, -1));
    content[content.length - 1] = xor8(content, 0, content.length - 1);
    return escapeFrame(content);
  } catch {
    return frame;
  }
}
