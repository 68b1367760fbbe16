/**
 * Codec 12 / 13 / 14 messages: replies to our commands, serial-port text, driver-card lines.
 * A reply (codec 12 type 0x06, codec 14 types 0x06 and 0x11) becomes a CommandReply and no
 * record; anything else sent this way (codec 13 lines, a type 0x05 command) stays a status
 * record, as before commands existed.
 */
import { Reader } from '../../codec/reader.js';
import { textReply } from '../../command-reply.js';
import { recordWithoutLocation, type CommandReply, type DecodedRecord } from '../../protocol.js';
import type { Attributes } from './io.js';
import { CODEC_12, CODEC_13, CODEC_14, expectEnd, type DataField, type RecordContext } from './records.js';

/** Codec 12 message type for camera file transfer (DualCam), driven by server chunk requests. */
const MESSAGE_CAMERA = 0x0d;
export const MESSAGE_COMMAND = 0x05;
export const MESSAGE_REPLY = 0x06;
/** Codec 14: the command named another IMEI than the unit's; the payload is the IMEI it was sent to. */
export const MESSAGE_IMEI_MISMATCH = 0x11;
/** Codec 14 payloads start with the IMEI as 8 bytes (its digits, a leading 0, read as hex). */
export const CODEC14_IMEI_BYTES = 8;

/** `buf` is the whole frame (or UDP datagram): a reply keeps it as its raw bytes. */
export function decodeMessages(buf: Buffer, from: number, to: number, count: number, codec: number, ctx: RecordContext): DataField {
  const r = new Reader(buf, from, to);
  const records: DecodedRecord[] = [];
  const replies: CommandReply[] = [];
  let cameraChunks = 0;
  for (let i = 0; i < count; i++) {
    const start = r.offset;
    const type = r.u8();
    const payload = r.sub(r.u32());
    if (type === MESSAGE_CAMERA && codec !== CODEC_14) {
      cameraChunks += 1;
    } else if (isReply(codec, type)) {
      replies.push(commandReply(codec, type, payload, buf));
    } else {
      if (codec === CODEC_14) payload.skip(CODEC14_IMEI_BYTES);
      const fixTime = codec === CODEC_13 ? payload.u32() * 1000 : ctx.now;
      records.push(messageRecord(type, payload.bytes(payload.remaining), fixTime, r.buf.subarray(start, r.offset)));
    }
  }
  expectEnd(r, count);
  const data: DataField = { codec, count, records, replies, acked: false };
  if (records.length === 0 && replies.length === 0) {
    data.ignoredReason = cameraChunks > 0 ? 'camera file transfer (codec 12 type 0x0d) is not supported' : 'empty message packet';
  }
  return data;
}

/** Codec 12 type 0x06; codec 14 types 0x06 and 0x11. Codec 13 is one-way: never a reply. */
function isReply(codec: number, type: number): boolean {
  if (codec === CODEC_14) return type === MESSAGE_REPLY || type === MESSAGE_IMEI_MISMATCH;
  return codec === CODEC_12 && type === MESSAGE_REPLY;
}

/** Codec 12: the response text. Codec 14: IMEI · response text (0x06), or the IMEI alone (0x11: nothing was run). */
function commandReply(codec: number, type: number, payload: Reader, frame: Buffer): CommandReply {
  if (codec === CODEC_14) payload.skip(CODEC14_IMEI_BYTES);
  if (type === MESSAGE_IMEI_MISMATCH) {
    return { matchKey: null, outcome: 'imei_mismatch', text: null, resultCode: null, raw: Buffer.from(frame) };
  }
  return textReply(null, messageText(payload.bytes(payload.remaining)), frame);
}

/** Trimmed ASCII when printable, else hex (serial-port replies are often binary). */
function messageText(body: Buffer): string {
  return isPrintable(body) ? body.toString('latin1').trim() : body.toString('hex');
}

/** A message as a status record: no location, the text (or hex) in `result`. */
function messageRecord(type: number, body: Buffer, fixTime: number, raw: Buffer): DecodedRecord {
  const result = messageText(body);
  const attributes: Attributes = { message_type: type, result };
  const driverId = driverCardId(result);
  if (driverId !== null) attributes.driver_unique_id = driverId;
  return recordWithoutLocation(fixTime, attributes, raw);
}

function isPrintable(body: Buffer): boolean {
  for (let i = 0; i < body.length; i++) {
    const b = body[i]!;
    if ((b < 0x20 || b > 0x7e) && b !== 0x0d && b !== 0x0a && b !== 0x09) return false;
  }
  return true;
}

/** Driver-card reader line `GTSL|type|…|…|<card id>|…`: the fifth field is the driver's id. */
function driverCardId(text: string): string | null {
  if (!text.startsWith('GTSL|')) return null;
  const id = text.split('|')[4];
  return id ? id : null;
}
