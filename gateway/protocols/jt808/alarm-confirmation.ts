/**
 * The platform's side of latched alarms. Some alarm bits stay set in every location report
 * until the platform confirms them with 0x8203 (the standard's "cleared after the answer"
 * bits); without it a latched SOS repeats forever. The gateway sends the confirmation after
 * the 0x8001 of the report, once the report is durable.
 */
import type { DecodedRecord, SessionInfo } from '../../protocol.js';
import { encodeMessage } from './ack.js';
import { usesStandardAlarmBits } from './alarms.js';
import { serverSerial, type Header } from './header.js';

export const MSG_ALARM_CONFIRMATION = 0x8203;

/** Bits 0 emergency, 3 danger warning, 20 area in/out, 21 route in/out, 22 road-section time, 27 illegal ignition, 28 illegal displacement. */
export const LATCHED_ALARM_BITS = (1 << 0) | (1 << 3) | (1 << 20) | (1 << 21) | (1 << 22) | (1 << 27) | (1 << 28);

/** The latched bits set in any of the records of one report (a 0x0704 batch is confirmed at once). */
export function latchedAlarmBits(records: readonly DecodedRecord[]): number {
  let bits = 0;
  for (const record of records) {
    const flags = record.attributes.alarm_flags;
    if (typeof flags === 'number') bits |= flags & LATCHED_ALARM_BITS;
  }
  return bits >>> 0;
}

/** 0x8203: answered serial u16 (the report's) · alarm type u32 (the bits confirmed); null when nothing is latched. */
export function alarmConfirmation(h: Header, records: readonly DecodedRecord[], session: SessionInfo): Buffer | null {
  if (!usesStandardAlarmBits(session.model)) return null;
  const bits = latchedAlarmBits(records);
  if (bits === 0) return null;
  const body = Buffer.alloc(6);
  body.writeUInt16BE(h.serial & 0xffff, 0);
  body.writeUInt32BE(bits, 2);
  return encodeMessage(MSG_ALARM_CONFIRMATION, h.bytes.subarray(h.phoneAt, h.phoneAt + h.phoneLength), serverSerial(session), body, h.version);
}

/** The report's 0x8001, followed by its 0x8203 when it carries latched alarms. */
export function withAlarmConfirmation(ack: Buffer, h: Header, records: readonly DecodedRecord[], session: SessionInfo): Buffer {
  const confirmation = alarmConfirmation(h, records, session);
  return confirmation === null ? ack : Buffer.concat([ack, confirmation]);
}
