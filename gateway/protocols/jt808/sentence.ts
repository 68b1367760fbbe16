/** `( … )` ASCII sentences that e-locks send on the JT/T 808 port. */
import { DecodeError } from '../../codec/reader.js';
import type { Decoded, SessionInfo } from '../../protocol.js';
import { normalizeTerminalId } from '../../../core/imei.js';
import { TEXT_CLOSE } from './frame.js';

/**
 * `(id,1,001,KIND,…)`. Not telemetry we store; a `BASE,2,TIME` time request is answered
 * by echoing it with the UTC time (yyyyMMddHHmmss) in place of TIME.
 */
export function decodeTextSentence(frame: Buffer, session: SessionInfo): Decoded {
  if (frame[frame.length - 1] !== TEXT_CLOSE) throw new DecodeError('malformed', 'text sentence without its closing parenthesis');
  const text = frame.toString('latin1');
  const id = text.slice(1, text.indexOf(','));
  const terminalId = /^\d{6,20}$/.test(id) ? normalizeTerminalId(id) : '';
  const reply = /,BASE,2,TIME\)$/.test(text) ? Buffer.from(text.replace(/TIME\)$/, `${utcStamp(session.now)})`), 'latin1') : null;
  // E-locks never register: their sentences store nothing, so they are answered on any connection.
  const decoded: Decoded = { records: [], replies: [], reply, ignoredReason: `e-lock text sentence ${text}`, sessionless: true };
  if (terminalId !== '') decoded.identity = { terminalId };
  return decoded;
}

function utcStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-T:]/g, '').slice(0, 14);
}
