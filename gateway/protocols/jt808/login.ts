/**
 * Registration (0x0100) and authentication (0x0102): the replies the gateway sends once it
 * knows the device, and the refusal for frames that come before authentication.
 */
import type { Decoded, DeviceIdentity, SessionInfo } from '../../protocol.js';
import { REGISTER_OK, REGISTER_TERMINAL_REGISTERED, REGISTER_TERMINAL_UNKNOWN, RESULT_FAILED, registerResponse } from './ack.js';
import { withIdentity } from './decoded.js';
import { TEXT_OPEN, unescapeContent } from './frame.js';
import { MSG_TERMINAL_RESPONSE, ack, isLockVendorMessage, readHeader, serverSerial, type Header } from './header.js';
import { terminalCode } from './identity.js';

export function decodeRegister(data: Buffer, h: Header, identity: DeviceIdentity | undefined, session: SessionInfo): Decoded {
  const replySerial = serverSerial(session);
  return withIdentity(identity, {
    records: [],
    replies: [],
    reply: registerResponse(h, replySerial, h.serial, REGISTER_OK, terminalCode(data.subarray(h.phoneAt, h.phoneAt + h.phoneLength))),
    refuse: registerResponse(h, replySerial, h.serial, REGISTER_TERMINAL_UNKNOWN, ''),
    authentication: {
      step: 'register',
      accept: (code) => registerResponse(h, replySerial, h.serial, REGISTER_OK, code),
      alreadyRegistered: registerResponse(h, replySerial, h.serial, REGISTER_TERMINAL_REGISTERED, ''),
    },
  });
}

export function decodeAuth(data: Buffer, h: Header, end: number, identity: DeviceIdentity | undefined, session: SessionInfo): Decoded {
  return withIdentity(authIdentity(identity, data, h, end), {
    records: [],
    replies: [],
    reply: ack(h, session),
    refuse: ack(h, session, RESULT_FAILED),
    authentication: { step: 'authenticate', authCode: authCodeOf(data, h, end) },
  });
}

/** The code of a 0x0102: the whole body as text (2011/2013), or `code length u8 · code` (2019). */
function authCodeOf(data: Buffer, h: Header, end: number): string {
  if (h.version === null) return data.toString('latin1', h.bodyStart, end);
  const length = data[h.bodyStart] ?? 0;
  return data.toString('latin1', h.bodyStart + 1, Math.min(end, h.bodyStart + 1 + length));
}

/**
 * 0x8001 result 1 "failure" for a frame the gateway refuses because the terminal has not
 * authenticated yet; null for frames that expect no reply (terminal responses 0x0001, the
 * vendor lock messages, ASCII sentences). `frame` decoded without error before.
 */
export function unauthenticatedReply(frame: Buffer, session: SessionInfo): Buffer | null {
  if (frame[0] === TEXT_OPEN) return null;
  const content = unescapeContent(frame);
  const h = readHeader(content, 0, content.length - 1);
  if (h.msgId === MSG_TERMINAL_RESPONSE || isLockVendorMessage(h.msgId)) return null;
  return ack(h, session, RESULT_FAILED);
}

/** 2019 authentication carries the IMEI after the auth code: code length u8 · code · IMEI[15] · firmware[20]. */
function authIdentity(identity: DeviceIdentity | undefined, data: Buffer, h: Header, end: number): DeviceIdentity | undefined {
  if (h.version === null) return identity;
  const codeLength = data[h.bodyStart];
  if (codeLength === undefined) return identity;
  const imeiAt = h.bodyStart + 1 + codeLength;
  if (imeiAt + 15 > end) return identity;
  const imei = data.toString('latin1', imeiAt, imeiAt + 15);
  return /^\d{15}$/.test(imei) ? { ...identity, imei } : identity;
}
