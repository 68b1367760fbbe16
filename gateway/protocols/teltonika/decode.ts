/**
 * Pure decode of one Teltonika frame (see README.md): the IMEI packet, or an AVL packet
 * whose data field goes to the decoder of its codec: 8/8E/16 (avl.ts), 7 (gh3000.ts),
 * 12/13/14 (messages.ts). Everything is read straight from the Buffer through the
 * bounds-checked Reader, so a short or garbled frame surfaces as a DecodeError and never
 * as garbage. UDP datagrams: udp.ts.
 */
import { crc16Arc } from '../../codec/crc.js';
import { DecodeError } from '../../codec/reader.js';
import type { Decoded, SessionInfo } from '../../protocol.js';
import { imeiAccepted, imeiRefused, recordCountAck } from './ack.js';
import { CODEC8_LAYOUT, CODEC8E_LAYOUT, CODEC16_LAYOUT, decodeAvlRecords } from './avl.js';
import { AVL_OVERHEAD, KEEP_ALIVE, MIN_AVL_DATA_LENGTH } from './frame.js';
import { decodeGh3000Records } from './gh3000.js';
import { decodeMessages } from './messages.js';
import { CODEC_12, CODEC_13, CODEC_14, CODEC_16, CODEC_8, CODEC_8E, CODEC_GH3000, contextOf, type DataField, type RecordContext } from './records.js';

export function decode(frame: Buffer, session: SessionInfo): Decoded {
  if (frame.length === 1 && frame[0] === KEEP_ALIVE) return { records: [], replies: [], reply: null, ignoredReason: 'keep-alive byte' };
  if (frame.length < 2) throw new DecodeError('truncated', `frame of ${frame.length} byte(s)`);
  if (frame.readUInt16BE(0) !== 0) return decodeImeiPacket(frame);
  return decodeAvlPacket(frame, contextOf(session));
}

// ---------------------------------------------------------------------------
// IMEI packet

function decodeImeiPacket(frame: Buffer): Decoded {
  const length = frame.readUInt16BE(0);
  if (frame.length !== 2 + length) {
    throw new DecodeError('bad_length', `IMEI packet declares ${length} byte(s), carries ${frame.length - 2}`);
  }
  const imei = frame.toString('latin1', 2);
  // Refuse right away: a unit that sends no digits will not be registered under anything.
  if (!/^\d+$/.test(imei)) throw new DecodeError('malformed', 'IMEI packet holds non-digits', imeiRefused());
  return { identity: { imei }, records: [], replies: [], reply: imeiAccepted(), refuse: imeiRefused() };
}

// ---------------------------------------------------------------------------
// AVL packet: preamble, length, data field, CRC

function decodeAvlPacket(frame: Buffer, ctx: RecordContext): Decoded {
  if (frame.length < AVL_OVERHEAD + MIN_AVL_DATA_LENGTH) {
    throw new DecodeError('bad_length', `AVL packet of ${frame.length} byte(s) is shorter than the smallest one`);
  }
  if (frame.readUInt32BE(0) !== 0) throw new DecodeError('malformed', 'non-zero AVL preamble');
  const dataLength = frame.readUInt32BE(4);
  if (frame.length !== dataLength + AVL_OVERHEAD) {
    throw new DecodeError('bad_length', `data length field ${dataLength}, frame carries ${frame.length - AVL_OVERHEAD} data byte(s)`);
  }
  const dataEnd = 8 + dataLength;
  // The CRC sits in the low half of a 4-byte field; a non-zero high half is a mismatch too.
  const crcField = frame.readUInt32BE(dataEnd);
  const crc = crc16Arc(frame, 8, dataEnd);
  if (crcField !== crc) {
    throw new DecodeError('bad_checksum', `CRC field ${crcField.toString(16)}, computed ${crc.toString(16)}`);
  }
  const data = decodeDataField(frame, 8, dataEnd, ctx);
  return toDecoded(data, data.acked ? recordCountAck(data.count) : null);
}

function toDecoded(data: DataField, reply: Buffer | null): Decoded {
  const decoded: Decoded = { records: data.records, replies: data.replies, reply };
  if (data.ignoredReason !== undefined) decoded.ignoredReason = data.ignoredReason;
  return decoded;
}

/** codec id · N1 · records · N2, between `start` and `end` of `buf`. Shared by TCP and UDP. */
export function decodeDataField(buf: Buffer, start: number, end: number, ctx: RecordContext): DataField {
  if (end - start < MIN_AVL_DATA_LENGTH) throw new DecodeError('truncated', 'data field shorter than codec id and counts');
  const codec = buf[start]!;
  const count = buf[start + 1]!;
  const trailerCount = buf[end - 1]!;
  if (count !== trailerCount) {
    throw new DecodeError('malformed', `record count ${count} in header, ${trailerCount} in trailer`);
  }
  const from = start + 2;
  const to = end - 1;
  switch (codec) {
    case CODEC_8:
      return { codec, count, acked: true, replies: [], records: decodeAvlRecords(buf, from, to, count, CODEC8_LAYOUT, ctx) };
    case CODEC_8E:
      return { codec, count, acked: true, replies: [], records: decodeAvlRecords(buf, from, to, count, CODEC8E_LAYOUT, ctx) };
    case CODEC_16:
      return { codec, count, acked: true, replies: [], records: decodeAvlRecords(buf, from, to, count, CODEC16_LAYOUT, ctx) };
    case CODEC_GH3000:
      return { codec, count, acked: true, replies: [], records: decodeGh3000Records(buf, from, to, count) };
    case CODEC_12:
    case CODEC_13:
    case CODEC_14:
      return decodeMessages(buf, from, to, count, codec, ctx);
    default:
      throw new DecodeError('unsupported', `codec 0x${codec.toString(16).padStart(2, '0')}`);
  }
}
