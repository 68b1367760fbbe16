/**
 * GT06 alarm codes onto our alarm kinds. Vendors reuse codes, so a few depend on the
 * device model from its registration. Codes without a kind of ours (power cut, tamper,
 * low battery, collision…) stay in the record as `alarm_code` / `event_code`.
 */
import type { DeviceAlarmKind } from '../../../core/alarms.js';

const LW = /^LW/i;
const SEEWORLD = /^SEEWORLD/i;
const VL = /^VL/i;
const G18 = /^G18/i;
const VXT01 = /^VXT01/i;

const matches = (re: RegExp, model: string | null): boolean => model !== null && re.test(model);

/** The alarm byte after voltage and GSM level in 0x16/0x26/0x27/0x19/0xA4/0xA5 packets. */
export function alarmOfCode(code: number, model: string | null): DeviceAlarmKind | null {
  switch (code) {
    case 0x01:
      return 'event.sos';
    case 0x06:
      return 'event.overspeed';
    case 0x1a:
    case 0x27:
    case 0xf1:
      return 'event.harsh_brake';
    case 0x1b:
    case 0x2a:
    case 0x2b:
    case 0x2e:
      return 'event.curve';
    case 0x26:
    case 0xf0:
      return 'event.acceleration';
    case 0x19:
      return matches(LW, model) ? 'event.acceleration' : null; // low battery elsewhere
    case 0x28:
      if (matches(SEEWORLD, model)) return 'event.curve';
      return matches(VL, model) ? null : 'event.harsh_brake'; // power off on VL*
    case 0x29:
      return matches(SEEWORLD, model) ? null : 'event.acceleration'; // accident on SEEWORLD
    case 0x30:
      return matches(VL, model) || matches(G18, model) ? 'event.harsh_brake' : null; // jamming elsewhere
    default:
      return null;
  }
}

/** Terminal-info bits 3–5: 4 is SOS; 7 is overspeed on VXT01 (removal elsewhere). */
export function alarmOfTerminalInfo(info: number, model: string | null): DeviceAlarmKind | null {
  const code = (info >> 3) & 0x07;
  if (code === 4) return 'event.sos';
  if (code === 7 && matches(VXT01, model)) return 'event.overspeed';
  return null;
}

/**
 * 0x95 event codes (JC100/JC400). 0x01 is SOS only in the packet with a location: the short
 * form uses it for a general alarm.
 */
export function alarmOfEventCode(code: number, withLocation: boolean): DeviceAlarmKind | null {
  switch (code) {
    case 0x01:
      return withLocation ? 'event.sos' : null;
    case 0x87:
      return 'event.overspeed';
    case 0x90:
      return 'event.acceleration';
    case 0x91:
      return 'event.harsh_brake';
    case 0x92:
      return 'event.curve';
    default:
      return null;
  }
}
