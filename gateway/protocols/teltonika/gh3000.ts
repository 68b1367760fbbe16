/** Codec 7 (GH3000) records: bit masks say which fields are present. */
import { Reader } from '../../codec/reader.js';
import type { DecodedRecord, DeviceAlarm } from '../../protocol.js';
import { ioKey, readFixedValue, type Attributes } from './io.js';
import { expectEnd } from './records.js';

/** GH3000 times count seconds from 2007-01-01T00:00:00Z. */
const GH3000_EPOCH_MS = Date.UTC(2007, 0, 1);

export function decodeGh3000Records(buf: Buffer, from: number, to: number, count: number): DecodedRecord[] {
  const r = new Reader(buf, from, to);
  const records: DecodedRecord[] = [];
  for (let i = 0; i < count; i++) records.push(readGh3000Record(r));
  expectEnd(r, count);
  return records;
}

function readGh3000Record(r: Reader): DecodedRecord {
  const start = r.offset;
  const stamp = r.u32();
  // Top 2 bits: priority; low 30 bits: seconds since 2007-01-01.
  const priority = stamp >>> 30;
  const fixTime = GH3000_EPOCH_MS + (stamp & 0x3fff_ffff) * 1000;
  const globalMask = r.u8();
  const attributes: Attributes = { priority };
  let lat: number | null = null;
  let lng: number | null = null;
  let altitudeM: number | null = null;
  let headingDeg: number | null = null;
  let speedKmh: number | null = null;
  let satellites: number | null = null;

  if (globalMask & 0x01) {
    const gpsMask = r.u8();
    if (gpsMask & 0x01) {
      const latitude = readFloat(r);
      const longitude = readFloat(r);
      if (Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180) {
        lat = latitude;
        lng = longitude;
      }
    }
    if (gpsMask & 0x02) altitudeM = r.i16();
    if (gpsMask & 0x04) headingDeg = (r.u8() * 360) / 256;
    if (gpsMask & 0x08) speedKmh = r.u8();
    if (gpsMask & 0x10) satellites = r.u8();
    if (gpsMask & 0x20) {
      attributes.cell_lac = r.u16();
      attributes.cell_id = r.u16();
    }
    if (gpsMask & 0x40) attributes.gsm_signal = r.u8();
    if (gpsMask & 0x80) attributes.operator_code = r.u32();
  }
  if (globalMask & 0x02) readGh3000Group(r, 1, attributes);
  if (globalMask & 0x04) readGh3000Group(r, 2, attributes);
  if (globalMask & 0x08) readGh3000Group(r, 4, attributes);

  // GH3000 IO 222 is its SOS button; it has no event IO field and its priorities differ from FMB's.
  const alarms: DeviceAlarm[] = attributes.io222 === 1 ? [{ kind: 'event.sos', details: { io222: 1 } }] : [];
  return {
    fixTime,
    valid: lat !== null && satellites !== null && satellites > 0,
    lat,
    lng,
    speedKmh,
    headingDeg,
    altitudeM,
    satellites,
    ignition: null,
    odometerM: null,
    alarms,
    attributes,
    raw: r.buf.subarray(start, r.offset),
  };
}

function readFloat(r: Reader): number {
  const at = r.offset;
  r.skip(4);
  return r.buf.readFloatBE(at);
}

function readGh3000Group(r: Reader, size: 1 | 2 | 4, attributes: Attributes): void {
  const count = r.u8();
  for (let i = 0; i < count; i++) {
    const id = r.u8();
    attributes[ioKey(id)] = readFixedValue(r, size);
  }
}
