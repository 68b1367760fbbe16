/**
 * JT/T 808 commands (README.md, "Commands"): each command is a platform message whose header
 * serial is ctx.serial, the match key; the terminal answers with 0x0001 (or 0x0201 / 0x0500 /
 * 0x1300) naming that serial. Header form as the terminal uses it: 2019 (version byte, BCD[10]
 * id) when ctx.protocolVersion is a number, else 2011/2013 (BCD[6] id, or a binary IMEI).
 */
import { toBcd } from '../../codec/bcd.js';
import { CommandEncodeError, relayBitCheck, type CommandContext, type EncodedCommand, type RelayCheck, type WireCommand } from '../../protocol.js';
import { encodeMessage, MAX_BODY_BYTES } from './ack.js';
import { gbkBytes } from './text.js';

export const MSG_SET_PARAMETERS = 0x8103;
export const MSG_TERMINAL_CONTROL = 0x8105;
export const MSG_LOCATION_QUERY = 0x8201;
export const MSG_TEXT_MESSAGE = 0x8300;
export const MSG_VEHICLE_CONTROL = 0x8500;

/** 0x8105 command word 4: terminal reset. */
const CONTROL_RESET = 4;
/** 0x8103 parameter 0x0029: default time report interval, DWORD seconds. */
export const PARAM_DEFAULT_REPORT_INTERVAL = 0x0029;
/** 0x8300 flag bits 2 (terminal display) and 3 (TTS read-out): the driver sees and hears it. */
const TEXT_FLAG_DISPLAY_AND_TTS = 0x0c;
/** 0x8300 flag bit 0 ("emergency"): the channel vendor units (BSJ) take SMS-style command texts on. */
const TEXT_FLAG_COMMAND = 0x01;
/** 2019 0x8300 text type: 1 notice. */
const TEXT_TYPE_NOTICE = 1;
/** 0x8500 control type 0x0001 (2019): the control flag's bit 0, which engine-cut units read as oil/power cut. */
const CONTROL_TYPE_FLAG = 0x0001;

export function encodeCommand(cmd: WireCommand, ctx: CommandContext): EncodedCommand {
  const version = ctx.protocolVersion ?? null;
  const [msgId, body] = messageOf(cmd, version);
  if (body.length > MAX_BODY_BYTES) throw new CommandEncodeError('invalid', `body of ${body.length} bytes exceeds ${MAX_BODY_BYTES}`);
  const serial = ctx.serial & 0xffff;
  return { bytes: encodeMessage(msgId, terminalPhone(ctx, version), serial, body, version), matchKey: serial };
}

function messageOf(cmd: WireCommand, version: number | null): [number, Buffer] {
  switch (cmd.type) {
    case 'engine_stop':
    case 'engine_resume':
      return [MSG_VEHICLE_CONTROL, vehicleControlBody(cmd.type === 'engine_stop', version)];
    case 'reboot':
      return [MSG_TERMINAL_CONTROL, Buffer.from([CONTROL_RESET])];
    case 'position_request':
      return [MSG_LOCATION_QUERY, Buffer.alloc(0)];
    case 'set_report_interval':
      return [MSG_SET_PARAMETERS, reportIntervalBody(cmd.intervalS)];
    case 'text':
      return [MSG_TEXT_MESSAGE, textBody(TEXT_FLAG_DISPLAY_AND_TTS, cmd.message, version)];
    case 'custom':
      return 'hex' in cmd ? customMessage(cmd.hex) : [MSG_TEXT_MESSAGE, textBody(TEXT_FLAG_COMMAND, cmd.text, version)];
  }
}

/** 2011/2013: control flag u8. 2019: count u16 · control type u16 · its parameter u8. */
function vehicleControlBody(stop: boolean, version: number | null): Buffer {
  const flag = stop ? 1 : 0;
  if (version === null) return Buffer.from([flag]);
  return Buffer.from([0, 1, CONTROL_TYPE_FLAG >> 8, CONTROL_TYPE_FLAG & 0xff, flag]);
}

/** Parameter count u8 · id u32 · length u8 · value: one DWORD parameter. */
function reportIntervalBody(seconds: number): Buffer {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 0xffffffff) {
    throw new CommandEncodeError('invalid', 'report interval must be a whole number of seconds, at least 1');
  }
  const body = Buffer.alloc(10);
  body[0] = 1;
  body.writeUInt32BE(PARAM_DEFAULT_REPORT_INTERVAL, 1);
  body[5] = 4;
  body.writeUInt32BE(seconds, 6);
  return body;
}

/** Flag u8 · [text type u8, 2019] · GBK text. */
function textBody(flag: number, text: string, version: number | null): Buffer {
  if (text.length === 0) throw new CommandEncodeError('invalid', 'text must not be empty');
  const encoded = gbkBytes(text);
  if (encoded === null) throw new CommandEncodeError('invalid', 'text holds a character GBK cannot encode');
  const head = version === null ? [flag] : [flag, TEXT_TYPE_NOTICE];
  return Buffer.concat([Buffer.from(head), encoded]);
}

/** `custom.hex` = message id (2 bytes) · body: framed here like any other message. */
function customMessage(hex: string): [number, Buffer] {
  if (!/^(?:[0-9a-fA-F]{2}){2,}$/.test(hex)) {
    throw new CommandEncodeError('invalid', 'custom hex must be a message id (4 hex digits) then an even number of hex digits');
  }
  const bytes = Buffer.from(hex, 'hex');
  return [bytes.readUInt16BE(0), bytes.subarray(2)];
}

/**
 * The terminal id bytes: the BCD digits of its terminal id (6 bytes, 10 in 2019), or, for a
 * unit known by IMEI only, the binary IMEI some units use (the first 14 digits as a 48-bit
 * value) or, in 2019, the IMEI's digits in BCD.
 */
export function terminalPhone(ctx: CommandContext, version: number | null): Buffer {
  const length = version === null ? 6 : 10;
  if (ctx.terminalId !== null) {
    if (!/^\d+$/.test(ctx.terminalId) || ctx.terminalId.length > length * 2) {
      throw new CommandEncodeError('invalid', `terminal id ${JSON.stringify(ctx.terminalId)} does not fit ${length} BCD bytes`);
    }
    return toBcd(ctx.terminalId, length);
  }
  if (ctx.imei === null || !/^\d{15}$/.test(ctx.imei)) throw new CommandEncodeError('invalid', 'JT/T 808 needs the terminal id or a 15-digit IMEI');
  if (version !== null) return toBcd(ctx.imei, length);
  const id = Buffer.alloc(6);
  id.writeUIntBE(Number(ctx.imei.slice(0, 14)), 0, 6);
  return id;
}

/** Status bits 10 (oil circuit cut) and 11 (electric circuit cut): how relay units report the 0x8500 they took. */
const STATUS_RELAY_CUT = (1 << 10) | (1 << 11);

export function relayCheck(cmd: WireCommand): RelayCheck | null {
  return relayBitCheck(cmd, 'status_flags', STATUS_RELAY_CUT);
}
