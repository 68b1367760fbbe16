/**
 * Additional items of a location body (`id u8 · length u8 · value`): the standard's, JT/T
 * 1078's, and a zone text some units send as 0xEB. Active-safety items: active-safety.ts.
 */
import { u32At } from '../../codec/reader.js';
import type { DecodedRecord, SessionInfo } from '../../protocol.js';
import { decodeActiveSafetyItem } from './active-safety.js';
import { addAlarm } from './alarms.js';
import { zoneTextAt } from './time.js';

/** `item_0xNN` keys, built once. */
const ITEM_KEYS = Array.from({ length: 256 }, (_, id) => `item_0x${id.toString(16).padStart(2, '0')}`);

/** Additional items `id u8 · length u8 · value`, from `at` to `end`. */
export function decodeItems(buf: Buffer, at: number, end: number, record: DecodedRecord, session: SessionInfo): void {
  const attributes = record.attributes;
  if (!itemsFillExactly(buf, at, end)) {
    // A vendor layout without TLVs (e.g. some 46-byte bodies): keep the fixed part; the bytes stay in `raw`.
    attributes.items_unparsed = buf.toString('hex', at, end);
    return;
  }
  while (at < end) {
    const id = buf[at]!;
    const length = buf[at + 1]!;
    const v = at + 2;
    if (!decodeStandardItem(buf, id, v, length, record, session)) attributes[ITEM_KEYS[id]!] = buf.toString('hex', v, v + length);
    at = v + length;
  }
}

/** True when the item lengths chain from `at` exactly to `end`. */
function itemsFillExactly(buf: Buffer, at: number, end: number): boolean {
  while (at + 2 <= end) at += 2 + buf[at + 1]!;
  return at === end;
}

/** Decodes a standard (or active-safety) item into `record`; false when it is not one we understand. */
function decodeStandardItem(buf: Buffer, id: number, v: number, length: number, record: DecodedRecord, session: SessionInfo): boolean {
  const attributes = record.attributes;
  switch (id) {
    case 0x01: // odometer, 0.1 km
      if (length !== 4) return false;
      record.odometerM = u32At(buf, v) * 100;
      return true;
    case 0x02: // fuel, 0.1 L
      if (length !== 2) return false;
      attributes.fuel_l = buf.readUInt16BE(v) / 10;
      return true;
    case 0x03: // tachograph speed, 0.1 km/h
      if (length !== 2) return false;
      attributes.tachograph_speed_kmh = buf.readUInt16BE(v) / 10;
      return true;
    case 0x04: // id of an alarm event that needs manual confirmation
      if (length !== 2) return false;
      attributes.alarm_event_id = buf.readUInt16BE(v);
      return true;
    case 0x11: // overspeed detail: location type [+ area id]
      if (length !== 1 && length !== 5) return false;
      attributes.overspeed_location_type = buf[v]!;
      if (length === 5) attributes.overspeed_area_id = buf.readUInt32BE(v + 1);
      return true;
    case 0x12: // area/route in-out: location type, area id, direction
      if (length !== 6) return false;
      attributes.area_location_type = buf[v]!;
      attributes.area_id = buf.readUInt32BE(v + 1);
      attributes.area_direction = buf[v + 5] === 0 ? 'in' : 'out';
      return true;
    case 0x13: // route section drive time: section id, seconds, 0 too short / 1 too long
      if (length !== 7) return false;
      attributes.route_section_id = buf.readUInt32BE(v);
      attributes.route_drive_time_s = buf.readUInt16BE(v + 4);
      attributes.route_time_result = buf[v + 6] === 0 ? 'short' : 'long';
      return true;
    case 0x14: // JT/T 1078 video alarm bits
      if (length !== 4) return false;
      attributes.video_alarm = buf.readUInt32BE(v);
      return true;
    case 0x15: // video signal loss, channel bits
      if (length !== 4) return false;
      attributes.video_signal_loss = buf.readUInt32BE(v);
      return true;
    case 0x16: // video occlusion, channel bits
      if (length !== 4) return false;
      attributes.video_occlusion = buf.readUInt32BE(v);
      return true;
    case 0x17: // storage fault bits
      if (length !== 2) return false;
      attributes.storage_fault = buf.readUInt16BE(v);
      return true;
    case 0x18: // abnormal driving behaviour
      if (length !== 2 && length !== 3) return false;
      decodeAbnormalDriving(buf, v, length, record);
      return true;
    case 0x25: // extended vehicle signal bits
      if (length !== 4) return false;
      attributes.vehicle_signals = buf.readUInt32BE(v);
      return true;
    case 0x2a: // IO status bits
      if (length !== 2) return false;
      attributes.io_status = buf.readUInt16BE(v);
      return true;
    case 0x2b: // analog: AD0 in the low 16 bits, AD1 in the high
      if (length !== 4) return false;
      attributes.analog_0 = buf.readUInt16BE(v + 2);
      attributes.analog_1 = buf.readUInt16BE(v);
      return true;
    case 0x30:
      if (length !== 1) return false;
      attributes.rssi = buf[v]!;
      return true;
    case 0x31:
      if (length !== 1) return false;
      record.satellites = buf[v]!;
      return true;
    case 0x64:
    case 0x65:
    case 0x67:
    case 0x70:
      return decodeActiveSafetyItem(buf, id, v, length, record, session.model);
    case 0xeb: {
      // Some units state the zone of their clock here ("UTC+08:00"); others pack vendor TLVs.
      const text = zoneTextAt(buf, v, length);
      if (text === null) return false;
      attributes.timezone = text;
      return true;
    }
    default:
      return false;
  }
}

/** JT/T 1078 item 0x18: u16 bits (0 fatigue, 1 phone call, 2 smoking) [+ fatigue level u8]. */
function decodeAbnormalDriving(buf: Buffer, v: number, length: number, record: DecodedRecord): void {
  const bits = buf.readUInt16BE(v);
  record.attributes.abnormal_driving = bits;
  const level = length === 3 ? buf[v + 2]! : undefined;
  if (level !== undefined) record.attributes.fatigue_level = level;
  const details = { item: '0x18', abnormal_driving: bits };
  if ((bits & 0x01) !== 0) addAlarm(record, level === undefined ? { kind: 'alarm.dsm.fatigue', details } : { kind: 'alarm.dsm.fatigue', level, details });
  if ((bits & 0x02) !== 0) addAlarm(record, { kind: 'alarm.dsm.phone', details });
}
