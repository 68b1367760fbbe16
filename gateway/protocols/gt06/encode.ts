/**
 * GT06 commands (README.md, "Commands"): the 0x80 online command, an ASCII text the unit
 * runs as if it came by SMS. The server flag (4 bytes) is ours to choose and the unit echoes
 * it in its 0x15 / 0x21 reply: it carries ctx.serial, the match key.
 */
import { CommandEncodeError, relayBitCheck, type CommandContext, type EncodedCommand, type RelayCheck, type WireCommand } from '../../protocol.js';
import { shortPacket } from './ack.js';

export const PROTO_ONLINE_COMMAND = 0x80;
/** Language field of the 0x80 content: 0x0001 Chinese, 0x0002 English (the replies then come in English). */
export const LANGUAGE_ENGLISH = 0x0002;
/** The short form's LEN is one byte: content (length byte, flag, command, language) + 5 fits 255. */
export const MAX_COMMAND_BYTES = 255 - 5 - 1 - 4 - 2;
/** `TIMER,T#`: the upload interval with ACC on, in the range Concox manuals give for it. */
export const MIN_REPORT_INTERVAL_S = 5;
export const MAX_REPORT_INTERVAL_S = 18_000;

export function encodeCommand(cmd: WireCommand, ctx: CommandContext): EncodedCommand {
  const serverFlag = ctx.serial >>> 0;
  return { bytes: onlineCommand(commandContent(cmd), serverFlag, ctx.serial, LANGUAGE_ENGLISH), matchKey: serverFlag };
}

/** The command's bytes: its text in ASCII, or the raw bytes of `custom.hex`. */
export function commandContent(cmd: WireCommand): Buffer {
  switch (cmd.type) {
    case 'engine_stop':
    case 'engine_resume':
      return asciiCommand(cmd.text);
    case 'reboot':
      return asciiCommand('RESET#');
    case 'position_request':
      return asciiCommand('WHERE#');
    case 'set_report_interval':
      return asciiCommand(`TIMER,${reportInterval(cmd.intervalS)}#`);
    case 'text':
      throw new CommandEncodeError('unsupported', 'GT06 units have no driver display');
    case 'custom':
      if (!('hex' in cmd)) return asciiCommand(cmd.text);
      if (!/^(?:[0-9a-fA-F]{2})+$/.test(cmd.hex)) throw new CommandEncodeError('invalid', 'custom hex must be an even number of hex digits');
      return checkedSize(Buffer.from(cmd.hex, 'hex'));
  }
}

/**
 * `78 78 LEN 80 · command length · server flag u32 · command · [language u16] · serial · CRC · 0D 0A`;
 * command length = 4 + the command's bytes. `language` null leaves the field out (older units).
 */
export function onlineCommand(command: Buffer, serverFlag: number, serial: number, language: number | null): Buffer {
  checkedSize(command);
  const content = Buffer.alloc(1 + 4 + command.length + (language === null ? 0 : 2));
  content[0] = 4 + command.length;
  content.writeUInt32BE(serverFlag >>> 0, 1);
  command.copy(content, 5);
  if (language !== null) content.writeUInt16BE(language, 5 + command.length);
  return shortPacket(PROTO_ONLINE_COMMAND, serial, content);
}

function asciiCommand(text: string): Buffer {
  if (!/^[\x20-\x7e]+$/.test(text)) throw new CommandEncodeError('invalid', 'a GT06 command is printable ASCII, not empty');
  return checkedSize(Buffer.from(text, 'latin1'));
}

function checkedSize(command: Buffer): Buffer {
  if (command.length === 0 || command.length > MAX_COMMAND_BYTES) {
    throw new CommandEncodeError('invalid', `a GT06 command is 1-${MAX_COMMAND_BYTES} bytes, not ${command.length}`);
  }
  return command;
}

function reportInterval(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < MIN_REPORT_INTERVAL_S || seconds > MAX_REPORT_INTERVAL_S) {
    throw new CommandEncodeError('invalid', `report interval must be ${MIN_REPORT_INTERVAL_S}-${MAX_REPORT_INTERVAL_S} s`);
  }
  return seconds;
}

/** Terminal-info bit 7: "oil and electricity disconnected", in heartbeats and status packets. */
const INFO_RELAY_CUT = 1 << 7;

export function relayCheck(cmd: WireCommand): RelayCheck | null {
  return relayBitCheck(cmd, 'terminal_info', INFO_RELAY_CUT);
}
