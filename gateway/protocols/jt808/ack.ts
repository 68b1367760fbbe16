/**
 * Messages the server sends a JT/T 808 terminal, and the one encoder every outgoing
 * message goes through: header, XOR check code, escaping, delimiters. Each call returns
 * a fresh buffer the caller may keep.
 */
import { escapeFrame } from './frame.js';

export const MSG_GENERAL_RESPONSE = 0x8001;
export const MSG_REGISTER_RESPONSE = 0x8100;

/** 0x8001 result codes. */
export const RESULT_OK = 0;
export const RESULT_FAILED = 1;
/** "Message error": the terminal resends (used for bad checksums and lengths). */
export const RESULT_MESSAGE_ERROR = 2;
export const RESULT_UNSUPPORTED = 3;

/** 0x8100 result codes. */
export const REGISTER_OK = 0;
export const REGISTER_TERMINAL_REGISTERED = 3;
export const REGISTER_TERMINAL_UNKNOWN = 4;

/** Body props bit 14: the 2019 header (version byte, 10-byte phone). */
export const PROPS_VERSION_2019 = 0x4000;
export const MAX_BODY_BYTES = 0x3ff;

/** Largest unescaped content: 2019 header without subpackaging, a full body, the check byte. */
const scratch = Buffer.allocUnsafe(2 + 2 + 1 + 10 + 2 + MAX_BODY_BYTES + 1);

/**
 * Writes the header into the scratch buffer; returns where the body goes. The terminal id
 * is `phoneLength` bytes of `bytes` from `phoneAt`, as the terminal sent them (6, or 10 in
 * 2019); `version` is the 2019 protocol version byte, or null for a 2011/2013 header.
 * Byte loops, not Buffer.copy: for a handful of bytes they are several times faster.
 */
function writeHeader(
  msgId: number,
  to: ReplyTarget,
  serial: number,
  bodyLength: number,
): number {
  if (bodyLength > MAX_BODY_BYTES) throw new RangeError(`JT/T 808 body of ${bodyLength} bytes exceeds ${MAX_BODY_BYTES}`);
  const props = bodyLength | (to.version === null ? 0 : PROPS_VERSION_2019);
  scratch[0] = msgId >>> 8;
  scratch[1] = msgId & 0xff;
  scratch[2] = props >>> 8;
  scratch[3] = props & 0xff;
  let at = 4;
  if (to.version !== null) scratch[at++] = to.version;
  const { bytes, phoneAt, phoneLength } = to;
  for (let i = 0; i < phoneLength; i++) scratch[at++] = bytes[phoneAt + i]!;
  scratch[at] = (serial >>> 8) & 0xff;
  scratch[at + 1] = serial & 0xff;
  return at + 2;
}

/** Appends the check code to the content in scratch, then escapes and delimits it. */
function finish(contentLength: number): Buffer {
  let check = 0;
  for (let i = 0; i < contentLength; i++) check ^= scratch[i]!;
  scratch[contentLength] = check;
  return escapeFrame(scratch, 0, contentLength + 1);
}

/** Any message: header (2019 when `version` is a number), body, check code, escaped and delimited. */
export function encodeMessage(msgId: number, phone: Buffer, serial: number, body: Buffer, version: number | null = null): Buffer {
  const at = writeHeader(msgId, { bytes: phone, phoneAt: 0, phoneLength: phone.length, version }, serial, body.length);
  body.copy(scratch, at);
  return finish(at + body.length);
}

/** Who a reply goes to: the terminal's id bytes (`bytes[phoneAt, +phoneLength)`) and header version, as received. */
export interface ReplyTarget {
  bytes: Buffer;
  phoneAt: number;
  phoneLength: number;
  version: number | null;
}

/** 0x8001 platform general response: reply serial · reply message id · result. */
export function generalResponse(
  to: ReplyTarget,
  serverSerial: number,
  replySerial: number,
  replyMsgId: number,
  result: number,
): Buffer {
  const at = writeHeader(MSG_GENERAL_RESPONSE, to, serverSerial, 5);
  scratch[at] = (replySerial >>> 8) & 0xff;
  scratch[at + 1] = replySerial & 0xff;
  scratch[at + 2] = (replyMsgId >>> 8) & 0xff;
  scratch[at + 3] = replyMsgId & 0xff;
  scratch[at + 4] = result;
  return finish(at + 5);
}

/** 0x8100 registration response: reply serial · result · auth code (ASCII, only on success). */
export function registerResponse(
  to: ReplyTarget,
  serverSerial: number,
  replySerial: number,
  result: number,
  authCode: string,
): Buffer {
  const code = result === REGISTER_OK ? authCode : '';
  const at = writeHeader(MSG_REGISTER_RESPONSE, to, serverSerial, 3 + code.length);
  scratch.writeUInt16BE(replySerial & 0xffff, at);
  scratch[at + 2] = result;
  scratch.write(code, at + 3, 'latin1');
  return finish(at + 3 + code.length);
}
