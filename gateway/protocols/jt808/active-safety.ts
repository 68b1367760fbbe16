/**
 * Active-safety items (Jiangsu/Guangdong standards): 0x64 ADAS, 0x65 DSM, 0x67 BSD and
 * 0x70 aggressive driving, each an alarm with its own id, flag, type, level and label.
 */
import type { DeviceAlarmKind } from '../../../core/alarms.js';
import type { DecodedRecord } from '../../protocol.js';
import { addAlarm } from './alarms.js';
import { bcdTime } from './time.js';

/**
 * Models known to reuse items 0x64-0x70 for lock/seal data: never read as active safety
 * even when an item happens to have the right length (see README.md).
 */
const NOT_ACTIVE_SAFETY_MODELS = new Set(['G-360P', 'G-508P']);

/** Where the common fields sit in each active-safety item (offsets into the value). */
interface SafetyLayout {
  prefix: string;
  length: number;
  /** Offset of the alarm level byte, or -1 when the item has none. */
  level: number;
  time: number;
  label: number;
  kinds: Partial<Record<number, DeviceAlarmKind>>;
}

/** 47 bytes: id u32 · flag · type · 6 type-specific bytes · speed · altitude u16 · lat · lng · BCD time · status u16 · label[16]. */
const SAFETY_LAYOUTS: Partial<Record<number, SafetyLayout>> = {
  0x64: { prefix: 'adas', length: 47, level: 6, time: 23, label: 31, kinds: { 0x01: 'alarm.adas.collision', 0x02: 'alarm.adas.lane_departure' } },
  0x65: { prefix: 'dsm', length: 47, level: 6, time: 23, label: 31, kinds: { 0x01: 'alarm.dsm.fatigue', 0x02: 'alarm.dsm.phone' } },
  // BSD has no level and no type-specific bytes: id · flag · type · speed · altitude · lat · lng · time · status · label = 41.
  0x67: { prefix: 'bsd', length: 41, level: -1, time: 17, label: 25, kinds: { 0x01: 'alarm.bsd', 0x02: 'alarm.bsd', 0x03: 'alarm.bsd' } },
  0x70: { prefix: 'driving', length: 47, level: -1, time: 23, label: 31, kinds: { 0x01: 'event.acceleration', 0x02: 'event.harsh_brake', 0x03: 'event.curve' } },
};

/** Alarm flag: 0 not applicable (one-shot event), 1 start, 2 end. */
const FLAG_END = 2;

/**
 * E-seal and lock vendors reuse ids 0x60-0x71 for their own data. An item is read as active
 * safety only when it has exactly the standard length, a flag of 0-2, a valid BCD time where
 * the standard puts it, and the model is not a known lock.
 */
export function isActiveSafetyItem(buf: Buffer, id: number, v: number, length: number, model: string | null): boolean {
  const layout = SAFETY_LAYOUTS[id];
  if (layout === undefined || length !== layout.length) return false;
  if (model !== null && NOT_ACTIVE_SAFETY_MODELS.has(model)) return false;
  if (buf[v + 4]! > FLAG_END) return false;
  return !Number.isNaN(bcdTime(buf, v + layout.time, 0));
}

export function decodeActiveSafetyItem(buf: Buffer, id: number, v: number, length: number, record: DecodedRecord, model: string | null): boolean {
  if (!isActiveSafetyItem(buf, id, v, length, model)) return false;
  const layout = SAFETY_LAYOUTS[id]!;
  const alarmId = buf.readUInt32BE(v);
  const flag = buf[v + 4]!;
  const type = buf[v + 5]!;
  const label = buf.toString('hex', v + layout.label, v + layout.label + 16);
  const p = layout.prefix;
  const attributes = record.attributes;
  attributes[`${p}_alarm_id`] = alarmId;
  attributes[`${p}_alarm_flag`] = flag;
  attributes[`${p}_alarm_type`] = type;
  attributes[`${p}_alarm_label`] = label;
  const level = layout.level >= 0 ? buf[v + layout.level]! : undefined;
  if (level !== undefined) attributes[`${p}_alarm_level`] = level;

  const kind = layout.kinds[type];
  // The end of an alarm (flag 2) is not a new alarm.
  if (kind === undefined || flag === FLAG_END) return true;
  const details: Record<string, number | string> = { item: `0x${id.toString(16)}`, alarm_id: alarmId, flag, type, label };
  addAlarm(record, level === undefined ? { kind, details } : { kind, level, details });
  return true;
}
