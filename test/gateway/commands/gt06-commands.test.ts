/**
 * GT06 commands on bytes: the 0x80 online command against Traccar's encoder test and the
 * Concox layout, and the corpus' 0x15 / 0x21 answers decoded into CommandReply.
 */
import { describe, expect, it } from 'vitest';
import { crc16X25 } from '../../../gateway/codec/crc.js';
import { DecodeError } from '../../../gateway/codec/reader.js';
import { CommandEncodeError, type CommandContext, type WireCommand } from '../../../gateway/protocol.js';
import { onlineCommand } from '../../../gateway/protocols/gt06/encode.js';
import { gt06 } from '../../../gateway/protocols/gt06/index.js';
import { COMMAND_SESSION, expectWholeAtEveryCut, fuzzDecoder } from '../../support/command-frames.js';
import { loadFrames } from '../../support/conformance.js';
import { thrown } from '../../support/thrown.js';

const hex = (b: Buffer) => b.toString('hex');
const CTX: CommandContext = { imei: '123456789012345', terminalId: null, serial: 0x0102 };
const corpus = loadFrames('gt06');
const frameOf = (index: number) => Buffer.from(corpus.find((f) => f.index === index)!.hex, 'hex');

// traccar/traccar src/test/java/org/traccar/protocol/Gt06ProtocolEncoderTest.java: engine stop, "Relay,1#",
// server flag 0, serial 0, no language field (Traccar's default).
const TRACCAR_RELAY_1 = '787812800c0000000052656c61792c312300009dee0d0a';

/** The command text inside a short-form 0x80: after LEN, protocol, length byte and server flag. */
function commandText(frame: Buffer): string {
  return frame.subarray(9, 9 + frame[4]! - 4).toString('latin1');
}

describe('GT06 command encoder', () => {
  it('writes Traccar\'s engine stop frame when the language field is left out', () => {
    expect(hex(onlineCommand(Buffer.from('Relay,1#'), 0, 0, null))).toBe(TRACCAR_RELAY_1);
  });

  it('writes the Concox layout: length, server flag = ctx.serial, command, language 0x0002, serial, CRC-16/X-25', () => {
    const { bytes, matchKey } = gt06.encodeCommand({ type: 'engine_stop', text: 'Relay,1#' }, CTX);
    expect(matchKey).toBe(0x0102);
    expect(hex(bytes.subarray(0, 4))).toBe('78781480'); // LEN = 1 + 1 + 4 + 8 + 2 + 2 + 2
    expect(bytes[4]).toBe(4 + 8);
    expect(bytes.readUInt32BE(5)).toBe(0x0102);
    expect(commandText(bytes)).toBe('Relay,1#');
    expect(hex(bytes.subarray(17, 19))).toBe('0002');
    expect(bytes.readUInt16BE(19)).toBe(0x0102);
    expect(bytes.readUInt16BE(21)).toBe(crc16X25(bytes, 2, 21));
    expect(hex(bytes.subarray(23))).toBe('0d0a');
    expect(bytes.length).toBe(bytes[2]! + 5);
    // The same frame as Traccar's, but for the language field and the numbers in it.
    const withoutLanguage = onlineCommand(Buffer.from('Relay,1#'), 0x0102, 0x0102, null);
    expect(hex(bytes.subarray(5, 17))).toBe(hex(withoutLanguage.subarray(5, 17)));
  });

  it('sends the documented texts', () => {
    const text = (cmd: WireCommand) => commandText(gt06.encodeCommand(cmd, CTX).bytes);
    expect(text({ type: 'engine_resume', text: 'Relay,0#' })).toBe('Relay,0#');
    expect(text({ type: 'reboot' })).toBe('RESET#');
    expect(text({ type: 'position_request' })).toBe('WHERE#');
    expect(text({ type: 'set_report_interval', intervalS: 30 })).toBe('TIMER,30#');
    expect(text({ type: 'custom', text: 'PARAM#' })).toBe('PARAM#');
    expect(text({ type: 'custom', hex: '5354415455532300' })).toBe('STATUS#\0');
  });

  it('refuses what it cannot carry with a CommandEncodeError', () => {
    const refused = (cmd: WireCommand) => thrown(CommandEncodeError, () => gt06.encodeCommand(cmd, CTX)).code;
    expect(refused({ type: 'text', message: 'hello' })).toBe('unsupported');
    expect(refused({ type: 'custom', text: '' })).toBe('invalid');
    expect(refused({ type: 'custom', text: 'é#' })).toBe('invalid');
    expect(refused({ type: 'custom', text: 'x'.repeat(244) })).toBe('invalid');
    expect(refused({ type: 'custom', hex: '0' })).toBe('invalid');
    expect(refused({ type: 'set_report_interval', intervalS: 4 })).toBe('invalid');
    expect(refused({ type: 'set_report_interval', intervalS: 18_001 })).toBe('invalid');
    // The longest command still fits the one-byte LEN.
    const longest = gt06.encodeCommand({ type: 'custom', text: 'x'.repeat(243) }, CTX).bytes;
    expect(longest[2]).toBe(255);
  });

  it('round-trips through the framer and decoder: the CRC holds and the frame is the 0x80 we meant', () => {
    const { bytes } = gt06.encodeCommand({ type: 'position_request' }, { ...CTX, serial: 0xffff });
    expect(gt06.splitFrames(bytes).frames.map(hex)).toEqual([hex(bytes)]);
    const decoded = gt06.decode(bytes, COMMAND_SESSION);
    expect(decoded.ignoredReason).toBe(`protocol 0x80 not interpreted: ${hex(bytes)}`); // not bad_checksum
    expect(decoded.reply).toBeNull();
  });

  it('frames each new frame whole wherever TCP cuts it', () => {
    expectWholeAtEveryCut(gt06, gt06.encodeCommand({ type: 'engine_stop', text: 'Relay,1#' }, CTX).bytes);
    expectWholeAtEveryCut(gt06, gt06.encodeCommand({ type: 'custom', hex: '0d0a78780d0a' }, CTX).bytes);
    for (const index of [117, 158, 182, 185, 193, 194, 195]) expectWholeAtEveryCut(gt06, frameOf(index));
  });
});

describe('GT06 command replies', () => {
  it.each([
    [117, 'succeeded', '<ICCID:89882390000097302650>'],
    [182, 'succeeded', 'DYD=Success!'],
    [193, 'failed', 'Already in the state of fuel supply to resume,the command is not running!'],
    [194, 'succeeded', 'Cut off the fuel supply: Success!'],
    [195, 'succeeded', 'Restore fuel supply: Success!'],
    [158, 'failed', 'Command error!'], // 0x21, UTF-16BE
    [185, 'succeeded', 'Current position!Lat:N54.739332,Lon:E25.273270,Course:126.53,Speed:0.0000,DateTime:2017-05-26  10:27:47'], // 0x21, ASCII
  ] as const)('corpus #%i decodes into a %s reply: %s', (index, outcome, text) => {
    const frame = frameOf(index);
    const decoded = gt06.decode(frame, COMMAND_SESSION);
    expect(decoded.records).toEqual([]);
    expect(decoded.reply).toBeNull(); // answers are not echoed
    expect(decoded.replies).toEqual([{ matchKey: 0, outcome, text, resultCode: null, raw: frame }]);
  });

  it('matches on the server flag the unit echoes', () => {
    const frame = Buffer.from(frameOf(194));
    frame.writeUInt32BE(0x0102, 5); // the flag our command with ctx.serial 0x0102 carried
    frame.writeUInt16BE(crc16X25(frame, 2, frame.length - 4), frame.length - 4);
    expect(gt06.decode(frame, COMMAND_SESSION).replies[0]!.matchKey).toBe(gt06.encodeCommand({ type: 'reboot' }, CTX).matchKey);
  });

  it('refuses #173, a 0x21 reply with a stale CRC, like any other frame', () => {
    expect(thrown(DecodeError, () => gt06.decode(frameOf(173), COMMAND_SESSION)).code).toBe('bad_checksum');
  });

  it('refuses a 0x21 reply in an encoding it does not know', () => {
    const frame = Buffer.from(frameOf(185));
    frame[9] = 0x03;
    frame.writeUInt16BE(crc16X25(frame, 2, frame.length - 4), frame.length - 4);
    expect(thrown(DecodeError, () => gt06.decode(frame, COMMAND_SESSION)).code).toBe('malformed');
  });

  it('throws only DecodeError on mutated and truncated replies', () => {
    const seeds = [117, 158, 182, 185, 193, 194, 195].map(frameOf);
    expect(fuzzDecoder(gt06, seeds, withFixedCrc)).toBeGreaterThan(0);
  });
});

/** Recomputes the CRC of a (possibly cut) frame so the mutated content reaches the reply parser. */
function withFixedCrc(frame: Buffer): Buffer {
  if (frame.length < 10) return frame;
  const copy = Buffer.from(frame);
  copy.writeUInt16BE(crc16X25(copy, 2, copy.length - 4), copy.length - 4);
  return copy;
}
