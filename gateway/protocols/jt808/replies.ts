/**
 * Terminal answers to our commands, each matched by the serial of the message it answers:
 * 0x0001 general response (to 0x8105, 0x8103, 0x8300, a custom message), 0x0201 (to 0x8201)
 * and 0x0500 (to 0x8500), which carry a location as well, and vendor 0x1300 (a text answer
 * to 0x8300 on some units, corpus #311).
 */
import { Reader } from '../../codec/reader.js';
import { textReply } from '../../command-reply.js';
import type { CommandReply } from '../../protocol.js';
import { MSG_ALARM_CONFIRMATION } from './alarm-confirmation.js';
import { utf16beText } from './text.js';

/** 0x0001 results: 0 ok, 1 failure, 2 message error, 3 unsupported. */
const OUTCOMES: readonly CommandReply['outcome'][] = ['succeeded', 'failed', 'bad_message', 'unsupported'];

/**
 * 0x0001: answered serial u16 · answered message id u16 · result u8. An answer to our alarm
 * confirmation (0x8203) answers no command: no reply. An unknown result is a failure.
 */
export function generalResponseReply(data: Buffer, at: number, end: number, frame: Buffer): CommandReply[] {
  const r = new Reader(data, at, end);
  const answeredSerial = r.u16();
  const answeredId = r.u16();
  const result = r.u8();
  if (answeredId === MSG_ALARM_CONFIRMATION) return [];
  return [{ matchKey: answeredSerial, outcome: OUTCOMES[result] ?? 'failed', text: null, resultCode: result, raw: Buffer.from(frame) }];
}

/** 0x0201 / 0x0500: answered serial u16, then a location body (a record of its own, decoded by the caller). */
export function locationAnswerReply(data: Buffer, at: number, end: number, frame: Buffer): CommandReply {
  const answeredSerial = new Reader(data, at, end).u16();
  return { matchKey: answeredSerial, outcome: 'succeeded', text: null, resultCode: null, raw: Buffer.from(frame) };
}

/** 0x1300: answered serial u16 · UTF-16BE text (`Set OK!`); the outcome is read from the text. */
export function textAnswerReply(data: Buffer, at: number, end: number, frame: Buffer): CommandReply {
  const answeredSerial = new Reader(data, at, end).u16();
  return textReply(answeredSerial, utf16beText(data, at + 2, end).trim(), frame);
}
