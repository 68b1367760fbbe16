/** Alarms of a location record: the standard's alarm bits, one alarm per kind. */
import type { DecodedRecord, DeviceAlarm } from '../../protocol.js';

/** Models whose alarm bits do not follow the standard (padlocks, AOVX asset trackers). */
const OWN_ALARM_BIT_MODELS = new Set(['G-360P', 'G-508P', 'AL300', 'GL100']);

/** False for models whose alarm bits mean something else: no alarm raised, none confirmed. */
export function usesStandardAlarmBits(model: string | null): boolean {
  return model === null || !OWN_ALARM_BIT_MODELS.has(model);
}

/** Alarm bits 0-2 are the standard's SOS, overspeed and fatigue; 29/30 are crash/rollover (kept as attributes). */
export function addAlarmBits(record: DecodedRecord, flags: number, model: string | null): void {
  if (!usesStandardAlarmBits(model)) return;
  if ((flags & 0x01) !== 0) addAlarm(record, { kind: 'event.sos' });
  if ((flags & 0x02) !== 0) addAlarm(record, { kind: 'event.overspeed' });
  if ((flags & 0x04) !== 0) addAlarm(record, { kind: 'alarm.dsm.fatigue' });
  if ((flags & (1 << 29)) !== 0) record.attributes.collision_warning = true;
  if ((flags & (1 << 30)) !== 0) record.attributes.rollover_warning = true;
}

/** One alarm per kind per record; a detailed one (active-safety item) replaces a bare alarm bit. */
export function addAlarm(record: DecodedRecord, alarm: DeviceAlarm): void {
  const alarms = record.alarms;
  for (let i = 0; i < alarms.length; i++) {
    if (alarms[i]!.kind !== alarm.kind) continue;
    if (alarms[i]!.details === undefined && alarm.details !== undefined) alarms[i] = alarm;
    return;
  }
  alarms.push(alarm);
}
