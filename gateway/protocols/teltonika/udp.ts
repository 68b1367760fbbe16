/** Teltonika over UDP: the channel header, then the same data field as TCP. */
import { DecodeError, Reader } from '../../codec/reader.js';
import type { CommandReply, DecodedRecord, SessionInfo } from '../../protocol.js';
import { udpAck } from './ack.js';
import { decodeDataField } from './decode.js';
import { contextOf } from './records.js';

export interface UdpDecoded {
  imei: string;
  records: DecodedRecord[];
  replies: CommandReply[];
  /** The UDP ack (0005 · packet id · 01 · AVL packet id · count); null for one-way messages. */
  reply: Buffer | null;
  ignoredReason?: string;
}

/**
 * One UDP datagram: length u16 · packet id u16 · packet type u8 · AVL packet id u8 ·
 * IMEI length u16 · IMEI · data field. No preamble and no CRC (UDP has its own checksum).
 */
export function decodeUdp(datagram: Buffer, session: Pick<SessionInfo, 'model' | 'now'> = { model: null, now: Date.now() }): UdpDecoded {
  const r = new Reader(datagram);
  const length = r.u16();
  if (length !== datagram.length - 2) {
    throw new DecodeError('bad_length', `UDP length field ${length}, datagram carries ${datagram.length - 2} byte(s)`);
  }
  const packetId = r.u16();
  r.u8(); // "not usable byte" of the UDP channel header (0x01)
  const avlPacketId = r.u8();
  const imei = r.bytes(r.u16()).toString('latin1');
  if (!/^\d+$/.test(imei)) throw new DecodeError('malformed', 'UDP IMEI holds non-digits');
  const data = decodeDataField(datagram, r.offset, datagram.length, contextOf(session));
  const decoded: UdpDecoded = { imei, records: data.records, replies: data.replies, reply: data.acked ? udpAck(packetId, avlPacketId, data.count) : null };
  if (data.ignoredReason !== undefined) decoded.ignoredReason = data.ignoredReason;
  return decoded;
}
