/**
 * JT/T 808 message ids and the message header (2011/2013 and 2019 layouts), and the
 * general responses every handler answers with.
 */
import { DecodeError, u16At } from '../../codec/reader.js';
import type { SessionInfo } from '../../protocol.js';
import { PROPS_VERSION_2019, RESULT_MESSAGE_ERROR, RESULT_OK, generalResponse, type ReplyTarget } from './ack.js';

export const MSG_TERMINAL_RESPONSE = 0x0001;
export const MSG_HEARTBEAT = 0x0002;
export const MSG_LOGOUT = 0x0003;
export const MSG_REGISTER = 0x0100;
export const MSG_AUTH = 0x0102;
export const MSG_TERMINAL_ATTRIBUTES = 0x0107;
export const MSG_LOCATION = 0x0200;
export const MSG_LOCATION_QUERY_RESPONSE = 0x0201;
export const MSG_VENDOR_BATCH = 0x0210;
export const MSG_VEHICLE_CONTROL_RESPONSE = 0x0500;
export const MSG_WAYBILL = 0x0701;
export const MSG_DRIVER_IDENTITY = 0x0702;
export const MSG_LOCATION_BATCH = 0x0704;
export const MSG_TRANSPARENT = 0x0900;
export const MSG_TIMEZONE_SYNC = 0x1007;
export const MSG_TEXT_REPLY = 0x1300;
export const MSG_ACCELERATION = 0x2070;
export const MSG_LOCK_LOCATION = 0x5501;
export const MSG_LOCK_BLIND_LOCATION = 0x5502;
export const MSG_TEXT_REPORT = 0x6006;

export const PROPS_BODY_LENGTH = 0x03ff;
export const PROPS_ENCRYPTION = 0x1c00;
const PROPS_SUBPACKAGED = 0x2000;

/** The header fields every handler needs; also the target of replies (terminal id + version as received). */
export interface Header extends ReplyTarget {
  msgId: number;
  props: number;
  serial: number;
  /** 0 when the message is not subpackaged. */
  packetCount: number;
  packetIndex: number;
  bodyStart: number;
}

/** Vendor e-lock messages 0x5501/0x5502 carry a 1-byte serial and misuse the props bits. */
export function isLockVendorMessage(msgId: number): boolean {
  return msgId === MSG_LOCK_LOCATION || msgId === MSG_LOCK_BLIND_LOCATION;
}

/** Header of the content starting at `start`; the body ends where the check code is (`checkAt`). */
export function readHeader(data: Buffer, start: number, checkAt: number): Header {
  if (checkAt - start < 4) throw new DecodeError('truncated', `content of ${checkAt + 1 - start} byte(s) holds no header`);
  const msgId = u16At(data, start);
  const props = u16At(data, start + 2);
  const lockVendor = isLockVendorMessage(msgId);
  const subpackaged = !lockVendor && (props & PROPS_SUBPACKAGED) !== 0;
  const is2019 = !lockVendor && (props & PROPS_VERSION_2019) !== 0 && !only2013Fits(props, checkAt - start, subpackaged);
  let at = start + 4;
  const phoneLength = is2019 ? 10 : 6;
  const headerEnd = at + (is2019 ? 1 : 0) + phoneLength + (lockVendor ? 1 : 2) + (subpackaged ? 4 : 0);
  if (headerEnd > checkAt) {
    throw new DecodeError('truncated', `header of message ${hex4(msgId)} needs ${headerEnd - start} byte(s), content has ${checkAt - start}`);
  }
  const version = is2019 ? data[at++]! : null;
  const phoneAt = at;
  at += phoneLength;
  const serial = lockVendor ? data[at++]! : u16At(data, at);
  if (!lockVendor) at += 2;
  let packetCount = 0;
  let packetIndex = 0;
  if (subpackaged) {
    packetCount = u16At(data, at);
    packetIndex = u16At(data, at + 2);
    at += 4;
  }
  return { msgId, props, serial, bytes: data, phoneAt, phoneLength, version, packetCount, packetIndex, bodyStart: at };
}

/** Header bytes before the body: id, props, [version,] phone, serial, [packet count and index]. */
const HEADER_2013_BYTES = 2 + 2 + 6 + 2;
const HEADER_2019_BYTES = 2 + 2 + 1 + 10 + 2;
const SUBPACKAGE_BYTES = 4;

/**
 * Some terminals set the 2019 version bit but send a 2013 header (6-byte id, no version
 * byte). Their declared body length then fits the content only with the 2013 header: taken
 * as 2013 rather than refused forever with "message error". A content that fits the 2019
 * header (or neither) keeps the bit's meaning.
 */
function only2013Fits(props: number, contentBytes: number, subpackaged: boolean): boolean {
  const body = props & PROPS_BODY_LENGTH;
  const extra = subpackaged ? SUBPACKAGE_BYTES : 0;
  return contentBytes === HEADER_2013_BYTES + extra + body && contentBytes !== HEADER_2019_BYTES + extra + body;
}

/** The server's serial for replies: the connection's frame counter. */
export function serverSerial(session: SessionInfo): number {
  return session.frameIndex & 0xffff;
}

/** 0x8001 general response to the message of `h`. */
export function ack(h: Header, session: SessionInfo, result = RESULT_OK): Buffer {
  return generalResponse(h, serverSerial(session), h.serial, h.msgId, result);
}

/** 0x8001 "message error" for a refused frame; none for the vendor lock messages (they use 0x4401). */
export function messageErrorReply(h: Header, session: SessionInfo): Buffer | null {
  return isLockVendorMessage(h.msgId) ? null : ack(h, session, RESULT_MESSAGE_ERROR);
}

export function hex2(n: number): string {
  return n.toString(16).padStart(2, '0');
}

export function hex4(n: number): string {
  return `0x${n.toString(16).padStart(4, '0')}`;
}
