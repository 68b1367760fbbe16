/**
 * Teltonika commands on bytes: the Codec 12 / Codec 14 packets the encoder writes against
 * frames published by others, and the replies units send (corpus, Teltonika wiki) decoded
 * into CommandReply.
 */
import { describe, expect, it } from 'vitest';
import { crc16Arc } from '../../../gateway/codec/crc.js';
import { DecodeError } from '../../../gateway/codec/reader.js';
import { CommandEncodeError, type CommandContext } from '../../../gateway/protocol.js';
import { teltonika } from '../../../gateway/protocols/teltonika/index.js';
import { decodeUdp } from '../../../gateway/protocols/teltonika/udp.js';
import { COMMAND_SESSION, expectWholeAtEveryCut, fuzzDecoder } from '../../support/command-frames.js';
import { loadFrames } from '../../support/conformance.js';
import { thrown } from '../../support/thrown.js';

const CTX: CommandContext = { imei: '352093081452251', terminalId: null, serial: 7 };
const CODEC14: CommandContext = { ...CTX, protocolVersion: 14 };
const hex = (b: Buffer) => b.toString('hex');
const bytes = (h: string) => Buffer.from(h, 'hex');

// traccar/traccar src/test/java/org/traccar/protocol/TeltonikaProtocolEncoderTest.java (testEncode).
const TRACCAR_SETDIGOUT_11 = '00000000000000140c01050000000c7365746469676f7574203131010000bed5';
const TRACCAR_HEX_PAYLOAD = '00000000000000100c01050000000803030000000185e8010000da8b';
// wiki.teltonika-gps.com/view/Codec, "Codec 12": the getinfo command example.
const WIKI_GETINFO = '000000000000000f0c010500000007676574696e666f0100004312';
// wiki.teltonika-gps.com/view/Codec, "Codec 14": getver to IMEI 352093081452251, its ACK reply, and a nACK (0x11)
// whose published CRC field (32ac) does not match its bytes.
const WIKI_C14_GETVER = '00000000000000160e01050000000e0352093081452251676574766572010000d2c1';
const WIKI_C14_ACK =
  '00000000000000ab0e0106000000a303520930814522515665723a30332e31382e31345f3034204750533a41584e5f352e31305f333333332048773a464d42313230' +
  '204d6f643a313520494d45493a33353230393330383134353232353120496e69743a323031382d31312d323220373a313320557074696d653a3137323334204d4143' +
  '3a363042444430303136323631205350433a312830292041584c3a30204f42443a3020424c3a312e362042543a340100007aae';
const WIKI_C14_NACK = '00000000000000100e011100000008035209308145246801000032ac';

describe('Teltonika command encoder', () => {
  it('writes the Codec 12 frames of Traccar\'s encoder test, text and hex payloads', () => {
    expect(hex(teltonika.encodeCommand({ type: 'custom', text: 'setdigout 11' }, CTX).bytes)).toBe(TRACCAR_SETDIGOUT_11);
    expect(hex(teltonika.encodeCommand({ type: 'custom', hex: '03030000000185E8' }, CTX).bytes)).toBe(TRACCAR_HEX_PAYLOAD);
    // The engine texts are configuration: the configured text goes out as it is.
    expect(hex(teltonika.encodeCommand({ type: 'engine_stop', text: 'setdigout 11' }, CTX).bytes)).toBe(TRACCAR_SETDIGOUT_11);
  });

  it('writes the wiki\'s Codec 12 getinfo and Codec 14 getver frames', () => {
    expect(hex(teltonika.encodeCommand({ type: 'custom', text: 'getinfo' }, CTX).bytes)).toBe(WIKI_GETINFO);
    expect(hex(teltonika.encodeCommand({ type: 'custom', text: 'getver' }, CODEC14).bytes)).toBe(WIKI_C14_GETVER);
  });

  it('has no match key: Teltonika replies carry no id and match in order', () => {
    expect(teltonika.encodeCommand({ type: 'reboot' }, CTX).matchKey).toBeNull();
    expect(teltonika.encodeCommand({ type: 'reboot' }, CODEC14).matchKey).toBeNull();
  });

  it('sends the documented texts for reboot, position request and report interval', () => {
    const text = (cmd: Parameters<typeof teltonika.encodeCommand>[0]) => {
      const frame = teltonika.encodeCommand(cmd, CTX).bytes;
      return frame.subarray(15, 15 + frame.readUInt32BE(11)).toString('latin1');
    };
    expect(text({ type: 'reboot' })).toBe('cpureset');
    expect(text({ type: 'position_request' })).toBe('getgps');
    expect(text({ type: 'set_report_interval', intervalS: 60 })).toBe('setparam 10050:60');
    expect(text({ type: 'engine_resume', text: 'setdigout 0' })).toBe('setdigout 0');
  });

  it('refuses what it cannot carry with a CommandEncodeError', () => {
    const refused = (cmd: Parameters<typeof teltonika.encodeCommand>[0], ctx = CTX) => thrown(CommandEncodeError, () => teltonika.encodeCommand(cmd, ctx)).code;
    expect(refused({ type: 'text', message: 'hello' })).toBe('unsupported');
    expect(refused({ type: 'custom', text: '' })).toBe('invalid');
    expect(refused({ type: 'custom', text: 'naïve' })).toBe('invalid');
    expect(refused({ type: 'custom', hex: 'abc' })).toBe('invalid');
    expect(refused({ type: 'custom', text: 'x'.repeat(1025) })).toBe('invalid');
    expect(refused({ type: 'set_report_interval', intervalS: 0 })).toBe('invalid');
    expect(refused({ type: 'set_report_interval', intervalS: 1.5 })).toBe('invalid');
    expect(refused({ type: 'reboot' }, { ...CODEC14, imei: null })).toBe('invalid');
  });

  it('round-trips through the framer and decoder: a command frame decodes as the command text', () => {
    for (const ctx of [CTX, CODEC14]) {
      const frame = teltonika.encodeCommand({ type: 'set_report_interval', intervalS: 300 }, ctx).bytes;
      expect(teltonika.splitFrames(frame).frames.map(hex)).toEqual([hex(frame)]);
      const decoded = teltonika.decode(frame, COMMAND_SESSION);
      expect(decoded.replies).toEqual([]);
      expect(decoded.records.map((r) => [r.attributes.message_type, r.attributes.result])).toEqual([[5, 'setparam 10050:300']]);
    }
  });

  it('frames each new frame whole wherever TCP cuts it', () => {
    const frames = [
      teltonika.encodeCommand({ type: 'reboot' }, CTX).bytes,
      teltonika.encodeCommand({ type: 'position_request' }, CODEC14).bytes,
      bytes(WIKI_C14_ACK),
      withFixedCrc(bytes(WIKI_C14_NACK)),
    ];
    for (const frame of frames) expectWholeAtEveryCut(teltonika, frame);
  });
});

describe('Teltonika command replies', () => {
  const corpusReplies = loadFrames('teltonika').filter((f) => f.derived?.codec === '0x0c' && f.derived?.codec12_type === '0x06');

  it('the corpus holds four codec 12 replies', () => {
    expect(corpusReplies.map((f) => f.index)).toEqual([17, 18, 31, 40]);
  });

  it.each(corpusReplies.map((f) => [f.index, f] as const))('corpus #%i decodes into one reply and no record', (_i, f) => {
    const frame = bytes(f.hex);
    const decoded = teltonika.decode(frame, COMMAND_SESSION);
    expect(decoded.records).toEqual([]);
    expect(decoded.reply).toBeNull(); // replies are not acked
    expect(decoded.replies).toHaveLength(1);
    const reply = decoded.replies[0]!;
    // The payload: from after type (1) and size (4) to before N2 and the CRC field.
    const payload = frame.subarray(15, frame.length - 5);
    expect(reply).toMatchObject({ matchKey: null, outcome: 'succeeded', resultCode: null });
    expect(hex(reply.raw)).toBe(f.hex);
    const printable = /^[\x20-\x7e\r\n\t]*$/.test(payload.toString('latin1'));
    expect(reply.text).toBe(printable ? payload.toString('latin1').trim() : hex(payload));
  });

  it('reads corpus #40 as the FM2 version line it is', () => {
    const decoded = teltonika.decode(bytes(corpusReplies.find((f) => f.index === 40)!.hex), COMMAND_SESSION);
    expect(decoded.replies[0]!.text).toBe('#FM2=262032761721396,26203,07.02.05');
  });

  it('decodes the wiki\'s Codec 14 ACK: the response after the 8 IMEI bytes', () => {
    const decoded = teltonika.decode(bytes(WIKI_C14_ACK), COMMAND_SESSION);
    expect(decoded.records).toEqual([]);
    expect(decoded.replies).toHaveLength(1);
    expect(decoded.replies[0]).toMatchObject({ matchKey: null, outcome: 'succeeded', resultCode: null });
    expect(decoded.replies[0]!.text).toMatch(/^Ver:03\.18\.14_04 GPS:AXN_5\.10_3333 Hw:FMB120 Mod:15 IMEI:352093081452251 .* BT:4$/);
  });

  it('refuses the wiki\'s Codec 14 nACK as published (stale CRC), and reads it as an IMEI mismatch once repaired', () => {
    expect(thrown(DecodeError, () => teltonika.decode(bytes(WIKI_C14_NACK), COMMAND_SESSION)).code).toBe('bad_checksum');
    const repaired = withFixedCrc(bytes(WIKI_C14_NACK));
    const decoded = teltonika.decode(repaired, COMMAND_SESSION);
    expect(decoded.records).toEqual([]);
    expect(decoded.replies).toEqual([{ matchKey: null, outcome: 'imei_mismatch', text: null, resultCode: null, raw: repaired }]);
  });

  it('reads a failure in the reply text as failed', () => {
    const reply = codec12Reply('Failed to set parameter');
    expect(teltonika.decode(reply, COMMAND_SESSION).replies[0]).toMatchObject({ outcome: 'failed', text: 'Failed to set parameter' });
  });

  it('decodes codec 12 replies over UDP too', () => {
    // length · packet id · 01 · AVL packet id · IMEI length · IMEI, then the data field (README.md, UDP).
    const field = codec12Reply('DOUT1:1 DOUT2:0').subarray(8, -4);
    const imei = Buffer.from('352093081452251', 'latin1');
    const header = Buffer.from([0, 0, 0xca, 0xfe, 0x01, 0x09, 0, imei.length]);
    const datagram = Buffer.concat([header, imei, field]);
    datagram.writeUInt16BE(datagram.length - 2, 0);
    const decoded = decodeUdp(datagram, COMMAND_SESSION);
    expect(decoded.replies.map((r) => [r.outcome, r.text])).toEqual([['succeeded', 'DOUT1:1 DOUT2:0']]);
    expect(decoded.reply).toBeNull();
  });

  it('throws only DecodeError on mutated and truncated replies', () => {
    const seeds = [bytes(WIKI_C14_ACK), withFixedCrc(bytes(WIKI_C14_NACK)), ...corpusReplies.map((f) => bytes(f.hex))];
    const decoded = fuzzDecoder(teltonika, seeds, withFixedCrc);
    expect(decoded).toBeGreaterThan(0);
  });
});

/** A codec 12 type 0x06 frame, built field by field from the wiki's layout. */
function codec12Reply(text: string): Buffer {
  const payload = Buffer.from(text, 'latin1');
  const field = Buffer.concat([Buffer.from([0x0c, 0x01, 0x06]), u32(payload.length), payload, Buffer.from([0x01])]);
  return Buffer.concat([u32(0), u32(field.length), field, u32(crc16Arc(field))]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

/** Rewrites the length and CRC fields of a (possibly cut) AVL packet, so the mutated data field is parsed. */
function withFixedCrc(frame: Buffer): Buffer {
  if (frame.length < 12) return frame;
  const copy = Buffer.from(frame);
  copy.writeUInt32BE(copy.length - 12, 4);
  copy.writeUInt32BE(crc16Arc(copy, 8, copy.length - 4), copy.length - 4);
  return copy;
}
