/**
 * Pure decode of one JT/T 808 frame (see README.md): unescape, check code, body length,
 * the header (header.ts), then the message, handed to the module of its family. Locations
 * (0x0200, 0x0201, 0x0704, vendor 0x0210) become records in our units; registration,
 * authentication, heartbeat and the rest get the reply the terminal waits for. The hot path
 * (0x0200) reads straight from the Buffer: no copy unless the frame holds a 7D, no
 * per-field allocation.
 */
import { xor8 } from '../../codec/crc.js';
import { DecodeError } from '../../codec/reader.js';
import type { Decoded, SessionInfo } from '../../protocol.js';
import { RESULT_UNSUPPORTED } from './ack.js';
import { withAlarmConfirmation } from './alarm-confirmation.js';
import { decodeLocationBatch, decodeVendorBatch } from './batch.js';
import { ignored, locationDecoded, withIdentity } from './decoded.js';
import { decodeDriverIdentity } from './driver.js';
import { DELIMITER, ESCAPE, TEXT_OPEN, unescapeContent } from './frame.js';
import {
  MSG_ACCELERATION,
  MSG_AUTH,
  MSG_DRIVER_IDENTITY,
  MSG_HEARTBEAT,
  MSG_LOCATION,
  MSG_LOCATION_BATCH,
  MSG_LOCATION_QUERY_RESPONSE,
  MSG_LOCK_BLIND_LOCATION,
  MSG_LOCK_LOCATION,
  MSG_LOGOUT,
  MSG_REGISTER,
  MSG_TERMINAL_ATTRIBUTES,
  MSG_TERMINAL_RESPONSE,
  MSG_TEXT_REPLY,
  MSG_TEXT_REPORT,
  MSG_TIMEZONE_SYNC,
  MSG_TRANSPARENT,
  MSG_VEHICLE_CONTROL_RESPONSE,
  MSG_VENDOR_BATCH,
  MSG_WAYBILL,
  PROPS_BODY_LENGTH,
  PROPS_ENCRYPTION,
  ack,
  hex2,
  hex4,
  isLockVendorMessage,
  messageErrorReply,
  readHeader,
  type Header,
} from './header.js';
import { identityOf } from './identity.js';
import { terminalAttributesText, waybillText } from './info.js';
import { decodeLocation } from './location.js';
import { decodeAuth, decodeRegister } from './login.js';
import { decodeTextSentence } from './sentence.js';
import { generalResponseReply, locationAnswerReply, textAnswerReply } from './replies.js';
import { gbkText } from './text.js';

export function decode(frame: Buffer, session: SessionInfo): Decoded {
  if (frame.length > 0 && frame[0] === TEXT_OPEN) return decodeTextSentence(frame, session);
  const last = frame.length - 1;
  if (last < 1 || frame[0] !== DELIMITER || frame[last] !== DELIMITER) {
    throw new DecodeError('malformed', 'not a 7E-delimited frame');
  }
  // One pass: XOR of the whole content (0 when the check code is right), stopping at an escape.
  let xorAll = 0;
  for (let i = 1; i < last; i++) {
    const b = frame[i]!;
    if (b === ESCAPE || b === DELIMITER) {
      const content = unescapeContent(frame);
      return decodeContent(content, 0, content.length, xor8(content), session, frame);
    }
    xorAll ^= b;
  }
  // Nothing escaped (the common case): decode in place.
  return decodeContent(frame, 1, last, xorAll, session, frame);
}

/** `data[start, end)` is the de-escaped content: header, body, check code; `xorAll` is the XOR of all of it; `frame` as received. */
function decodeContent(data: Buffer, start: number, end: number, xorAll: number, session: SessionInfo, frame: Buffer): Decoded {
  const checkAt = end - 1;
  const h = readHeader(data, start, checkAt);
  if (xorAll !== 0) {
    throw new DecodeError(
      'bad_checksum',
      `check code ${hex2(data[checkAt]!)}, computed ${hex2(xor8(data, start, checkAt))}`,
      messageErrorReply(h, session),
    );
  }
  const bodyLength = checkAt - h.bodyStart;
  if ((h.props & PROPS_BODY_LENGTH) !== bodyLength) {
    throw new DecodeError(
      'bad_length',
      `body length field ${h.props & PROPS_BODY_LENGTH}, body has ${bodyLength} byte(s)`,
      messageErrorReply(h, session),
    );
  }
  try {
    const decoded = decodeMessage(data, h, checkAt, session, frame);
    decoded.protocolVersion = h.version; // commands to this terminal go out in the same header form
    return decoded;
  } catch (err) {
    // The check code was right, so the terminal sent this: tell it the message is wrong.
    if (err instanceof DecodeError && err.reply === null) throw new DecodeError(err.code, err.message, messageErrorReply(h, session));
    throw err;
  }
}

function decodeMessage(data: Buffer, h: Header, end: number, session: SessionInfo, frame: Buffer): Decoded {
  const identity = identityOf(data, h.phoneAt, h.phoneLength);
  const at = h.bodyStart;
  if (h.packetCount > 0) {
    return withIdentity(identity, {
      records: [],
      replies: [],
      reply: ack(h, session, RESULT_UNSUPPORTED),
      ignoredReason: `packet ${h.packetIndex}/${h.packetCount} of message ${hex4(h.msgId)}: reassembly not supported`,
    });
  }
  if (!isLockVendorMessage(h.msgId) && (h.props & PROPS_ENCRYPTION) !== 0) {
    return withIdentity(identity, { records: [], replies: [], reply: ack(h, session, RESULT_UNSUPPORTED), ignoredReason: 'encrypted body' });
  }
  switch (h.msgId) {
    case MSG_LOCATION:
    case MSG_LOCATION_BATCH: {
      const records = h.msgId === MSG_LOCATION ? [decodeLocation(data, at, end, session)] : decodeLocationBatch(data, at, end, session);
      return locationDecoded(identity, records, withAlarmConfirmation(ack(h, session), h, records, session));
    }
    case MSG_LOCATION_QUERY_RESPONSE:
    case MSG_VEHICLE_CONTROL_RESPONSE: {
      // Answers to our 0x8201 / 0x8500: answered serial, then a location body; answers are not acked.
      if (end - at < 2) throw new DecodeError('truncated', `${hex4(h.msgId)} without an answered serial`);
      const decoded = locationDecoded(identity, [decodeLocation(data, at + 2, end, session)], null);
      decoded.replies.push(locationAnswerReply(data, at, end, frame));
      return decoded;
    }
    case MSG_VENDOR_BATCH:
      return decodeVendorBatch(data, h, end, identity, session);
    case MSG_HEARTBEAT:
    case MSG_LOGOUT:
      return withIdentity(identity, { records: [], replies: [], reply: ack(h, session) });
    case MSG_TERMINAL_RESPONSE:
      return withIdentity(identity, { records: [], replies: generalResponseReply(data, at, end, frame), reply: null });
    case MSG_REGISTER:
      return decodeRegister(data, h, identity, session);
    case MSG_AUTH:
      return decodeAuth(data, h, end, identity, session);
    case MSG_DRIVER_IDENTITY:
      return withIdentity(identity, { records: [decodeDriverIdentity(data, at, end, h, session)], replies: [], reply: ack(h, session) });
    case MSG_TEXT_REPORT:
      return ignored(identity, ack(h, session), `text report: ${gbkText(data, at + 1, end)}`);
    case MSG_TEXT_REPLY: {
      const reply = textAnswerReply(data, at, end, frame);
      return { ...ignored(identity, ack(h, session), `text reply: ${reply.text ?? ''}`), replies: [reply] };
    }
    case MSG_WAYBILL:
      return ignored(identity, ack(h, session), `waybill/command reply: ${waybillText(data, at, end)}`);
    case MSG_TERMINAL_ATTRIBUTES:
      return ignored(identity, ack(h, session), terminalAttributesText(data, at, end, h));
    case MSG_TRANSPARENT:
      return ignored(
        identity,
        ack(h, session),
        `transparent data${end > at ? ` type 0x${hex2(data[at]!)}` : ''} (vendor payload, not interpreted)`,
      );
    case MSG_ACCELERATION:
      return ignored(identity, ack(h, session), 'accelerometer samples (vendor 0x2070, not stored)');
    case MSG_TIMEZONE_SYNC:
      return ignored(identity, ack(h, session), 'timezone sync (vendor 0x1007)');
    case MSG_LOCK_LOCATION:
    case MSG_LOCK_BLIND_LOCATION:
      // Not acked: the unit keeps these positions until a decoder for its layout exists.
      return ignored(identity, null, `vendor e-lock location ${hex4(h.msgId)}: layout not supported, not acknowledged`);
    default:
      return ignored(identity, ack(h, session, RESULT_UNSUPPORTED), `unsupported message ${hex4(h.msgId)}`);
  }
}
