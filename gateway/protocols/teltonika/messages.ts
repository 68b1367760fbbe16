/** Codec 12 / 13 messages: command replies, serial-port text, driver-card lines. */
import { Reader } from '../../codec/reader.js';
import { recordWithoutLocation, type DecodedRecord } from '../../protocol.js';
import type { Attributes } from './io.js';
import { CODEC_13, expectEnd, type DataField, type RecordContext } from './records.js';

/** Codec 12 message type for camera file transfer (DualCam), driven by server chunk requests. */
const MESSAGE_CAMERA = 0x0d;

export function decodeMessages(buf: Buffer, from: number, to: number, count: number, codec: number, ctx: RecordContext): DataField {
  const r = new Reader(buf, from, to);
  const records: DecodedRecord[] = [];
  let cameraChunks = 0;
  for (let i = 0; i < count; i++) {
    const start = r.offset;
    const type = r.u8();
    const payload = r.sub(r.u32());
    if (type === MESSAGE_CAMERA) {
      cameraChunks += 1;
      continue;
    }
    const fixTime = codec === CODEC_13 ? payload.u32() * 1000 : ctx.now;
    records.push(messageRecord(type, payload.bytes(payload.remaining), fixTime, r.buf.subarray(start, r.offset)));
  }
  expectEnd(r, count);
  const data: DataField = { codec, count, records, acked: false };
  if (records.length === 0) {
    data.ignoredReason = cameraChunks > 0 ? 'camera file transfer (codec 12 type 0x0d) is not supported' : 'empty message packet';
  }
  return data;
}

/** A message as a status record: no location, the text (or hex) in `result`. */
function messageRecord(type: number, body: Buffer, fixTime: number, raw: Buffer): DecodedRecord {
  const result = isPrintable(body) ? body.toString('latin1').trim() : body.toString('hex');
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
