/** What every record decoder (codecs 8/8E/16, 7, 12/13/14) shares: codec ids, context, result. */
import { DecodeError, type Reader } from '../../codec/reader.js';
import type { CommandReply, DecodedRecord, SessionInfo } from '../../protocol.js';
import { usesFmbIoTable } from './io-tables.js';

export const CODEC_GH3000 = 0x07;
export const CODEC_8 = 0x08;
export const CODEC_8E = 0x8e;
export const CODEC_12 = 0x0c;
export const CODEC_13 = 0x0d;
export const CODEC_14 = 0x0e;
export const CODEC_16 = 0x10;

/** What a record decoder needs besides the bytes. */
export interface RecordContext {
  /** Apply the FMB/FMC-family IO table (Eye sensor IOs); from the device model. */
  fmbIoTable: boolean;
  /** Time for messages that carry none (codec 12). */
  now: number;
}

export function contextOf(session: Pick<SessionInfo, 'model' | 'now'>): RecordContext {
  return { fmbIoTable: usesFmbIoTable(session.model), now: session.now };
}

/** A decoded data field: codec id, N1, the records, and whether the device waits for a count ack. */
export interface DataField {
  codec: number;
  count: number;
  records: DecodedRecord[];
  /** Answers to our commands (codec 12 type 0x06, codec 14). */
  replies: CommandReply[];
  /** AVL codecs are acked with the record count; codec 12/13 messages are one-way. */
  acked: boolean;
  ignoredReason?: string;
}

/** Fails unless the records used up exactly the bytes between N1 and N2. */
export function expectEnd(r: Reader, count: number): void {
  if (r.remaining !== 0) throw new DecodeError('malformed', `${r.remaining} byte(s) left over after ${count} record(s)`);
}
