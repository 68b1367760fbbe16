/**
 * Teltonika commands (README.md, "Commands"): a text command in a Codec 12 packet, or in a
 * Codec 14 packet that names the unit's IMEI (ctx.protocolVersion 14, for firmware that has
 * it: a unit answers 0x11 rather than run a command meant for another IMEI). Both ride the
 * AVL packet wrapper: preamble, data length, data field, CRC-16/ARC of the data field.
 * Neither carries an id, so `matchKey` is null: the gateway keeps one command in flight.
 */
import { toBcd } from '../../codec/bcd.js';
import { crc16Arc } from '../../codec/crc.js';
import { CommandEncodeError, type CommandContext, type EncodedCommand, type RelayCheck, type WireCommand } from '../../protocol.js';
import { AVL_OVERHEAD } from './frame.js';
import { CODEC14_IMEI_BYTES, MESSAGE_COMMAND } from './messages.js';
import { CODEC_12, CODEC_14 } from './records.js';

/** FMB parameter 10050: Home network, "Vehicle MOVING", Min Period (s); the wiki's range tops out at 30 days. */
export const MOVING_PERIOD_PARAMETER = 10050;
export const MAX_REPORT_INTERVAL_S = 2_592_000;
/** Far above any documented command; the protocol's u32 size would let one command pin 4 GiB. */
export const MAX_COMMAND_BYTES = 1024;

export function encodeCommand(cmd: WireCommand, ctx: CommandContext): EncodedCommand {
  const payload = commandPayload(cmd);
  if (ctx.protocolVersion !== 14) return { bytes: codec12Packet(payload), matchKey: null };
  if (ctx.imei === null) throw new CommandEncodeError('invalid', 'codec 14 needs the unit IMEI');
  return { bytes: codec14Packet(ctx.imei, payload), matchKey: null };
}

/** What the unit runs: its SMS/GPRS command text, or raw bytes for `custom.hex`. */
export function commandPayload(cmd: WireCommand): Buffer {
  switch (cmd.type) {
    case 'engine_stop':
    case 'engine_resume':
      return asciiCommand(cmd.text);
    case 'reboot':
      return asciiCommand('cpureset');
    case 'position_request':
      return asciiCommand('getgps');
    case 'set_report_interval':
      return asciiCommand(`setparam ${MOVING_PERIOD_PARAMETER}:${reportInterval(cmd.intervalS)}`);
    case 'text':
      throw new CommandEncodeError('unsupported', 'teltonika units have no driver display');
    case 'custom':
      return 'hex' in cmd ? hexPayload(cmd.hex) : asciiCommand(cmd.text);
  }
}

/** Codec 12, type 0x05: `00000000 · N · 0C 01 05 · size u32 · command · 01 · CRC`. */
export function codec12Packet(payload: Buffer): Buffer {
  return commandPacket(CODEC_12, [payload]);
}

/** Codec 14, type 0x05: as codec 12, the command size counting the 8 IMEI bytes that lead it. */
export function codec14Packet(imei: string, payload: Buffer): Buffer {
  if (!/^\d{1,15}$/.test(imei)) throw new CommandEncodeError('invalid', `IMEI ${JSON.stringify(imei)} is not 1-15 digits`);
  return commandPacket(CODEC_14, [toBcd(imei, CODEC14_IMEI_BYTES), payload]);
}

function commandPacket(codec: number, parts: Buffer[]): Buffer {
  const size = parts.reduce((n, p) => n + p.length, 0);
  const dataLength = 3 + 4 + size + 1; // codec · quantity · type, size, command, quantity
  const out = Buffer.alloc(dataLength + AVL_OVERHEAD);
  out.writeUInt32BE(dataLength, 4);
  out[8] = codec;
  out[9] = 1;
  out[10] = MESSAGE_COMMAND;
  out.writeUInt32BE(size, 11);
  let at = 15;
  for (const part of parts) at += part.copy(out, at);
  out[at] = 1;
  out.writeUInt32BE(crc16Arc(out, 8, at + 1), at + 1);
  return out;
}

function asciiCommand(text: string): Buffer {
  if (!/^[\x20-\x7e]+$/.test(text)) throw new CommandEncodeError('invalid', 'a teltonika command is printable ASCII, not empty');
  return checkedSize(Buffer.from(text, 'latin1'));
}

function hexPayload(hex: string): Buffer {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex)) throw new CommandEncodeError('invalid', 'custom hex must be an even number of hex digits');
  return checkedSize(Buffer.from(hex, 'hex'));
}

function checkedSize(payload: Buffer): Buffer {
  if (payload.length > MAX_COMMAND_BYTES) throw new CommandEncodeError('invalid', `command of ${payload.length} bytes exceeds ${MAX_COMMAND_BYTES}`);
  return payload;
}

function reportInterval(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_REPORT_INTERVAL_S) {
    throw new CommandEncodeError('invalid', `report interval must be 1-${MAX_REPORT_INTERVAL_S} s`);
  }
  return seconds;
}

const SETDIGOUT = /^setdigout\s+([01])/i;

/**
 * IO 179 (digital output 1) when the engine text was `setdigout <d…>`: its first digit is DOUT1's
 * asked state. Other texts drive outputs the records do not name.
 */
export function relayCheck(cmd: WireCommand): RelayCheck | null {
  if (cmd.type !== 'engine_stop' && cmd.type !== 'engine_resume') return null;
  const digit = SETDIGOUT.exec(cmd.text)?.[1];
  if (digit === undefined) return null;
  return { expected: digit === '1', read: (r) => (typeof r.attributes.io179 === 'number' ? r.attributes.io179 === 1 : null) };
}
