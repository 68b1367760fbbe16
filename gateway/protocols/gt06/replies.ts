/**
 * GT06 answers to the 0x80 online command: 0x15 (short form, ASCII) and 0x21 (usually long
 * form, ASCII or UTF-16BE). Both echo our server flag, the match key; the outcome is read
 * from the text (gateway/command-reply.ts).
 */
import { DecodeError, type Reader } from '../../codec/reader.js';
import { textReply } from '../../command-reply.js';
import type { Decoded } from '../../protocol.js';

export const PROTO_COMMAND_REPLY = 0x15;
export const PROTO_COMMAND_REPLY_TEXT = 0x21;
const ENCODING_ASCII = 0x01;
const ENCODING_UTF16BE = 0x02;
const LANGUAGE_BYTES = 2;

/** `content` runs from after the protocol number to before the serial; `frame` is kept as the raw bytes. */
export function decodeCommandReply(proto: number, content: Reader, frame: Buffer): Decoded {
  const { serverFlag, text } = proto === PROTO_COMMAND_REPLY ? readStringReply(content) : readTextReply(content);
  return { records: [], replies: [textReply(serverFlag, text, frame)], reply: null, ignoredReason: `command reply: ${text}` };
}

/**
 * 0x15: command length u8 (4 + the text) · server flag u32 · ASCII text · language u16. Some
 * units send length 0 and pad the text with NULs up to the language field (corpus #182, #193).
 */
function readStringReply(r: Reader): { serverFlag: number; text: string } {
  const length = r.u8();
  if (length > 0 && length < 4) throw new DecodeError('malformed', `0x15 command length ${length} is shorter than the server flag`);
  const serverFlag = r.u32();
  const textBytes = length > 0 ? length - 4 : Math.max(0, r.remaining - LANGUAGE_BYTES);
  return { serverFlag, text: cleanText(r.bytes(textBytes).toString('latin1')) };
}

/** 0x21: server flag u32 · encoding u8 (1 ASCII, 2 UTF-16BE) · text. */
function readTextReply(r: Reader): { serverFlag: number; text: string } {
  const serverFlag = r.u32();
  const encoding = r.u8();
  const body = r.bytes(r.remaining);
  if (encoding === ENCODING_ASCII) return { serverFlag, text: cleanText(body.toString('latin1')) };
  if (encoding !== ENCODING_UTF16BE) throw new DecodeError('malformed', `0x21 text encoding ${encoding} is neither 1 (ASCII) nor 2 (UTF-16BE)`);
  if (body.length % 2 !== 0) throw new DecodeError('malformed', `0x21 UTF-16BE text of ${body.length} bytes`);
  return { serverFlag, text: cleanText(Buffer.from(body).swap16().toString('utf16le')) };
}

/** NUL padding and surrounding blanks are not part of what the unit said. */
function cleanText(text: string): string {
  return text.replace(/\0+/g, ' ').trim();
}
