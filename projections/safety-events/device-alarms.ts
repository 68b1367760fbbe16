/**
 * A device-reported alarm as an event entry: the payload fields (docs/api-decisions.md) of
 * its kind, and the raw protocol details kept in `context`.
 */
import type { AlarmReported } from '../../core/events.js';
import type { RaisedKind } from '../device-events.js';
import { believableTime } from '../usable-fix.js';
import { fixPosition, round1, type Detection } from './motion.js';
import type { DetectorState } from './state.js';
import { THRESHOLDS as T } from './thresholds.js';
import { tripFields } from './trip.js';

type Alarm = AlarmReported['data'];

/** JT/T 808 active-safety items whose 16-byte alarm label announces attachments (byte 14). */
const LABELLED_ITEMS = new Set(['0x64', '0x65', '0x67', '0x70']);

/**
 * JT/T 808 status alarm bits (and the 0x18 abnormal-driving bits) stay set in
 * every report while the condition lasts; active-safety items carry their own
 * alarm id and, like every other protocol's alarms, are one-shot events.
 */
export function isStateAlarm(d: Alarm): boolean {
  return d.protocol === 'jt808' && d.details.alarm_id === undefined;
}

/** Moves to the report at `t` unless it is the current one (a record's fix comes just before its alarms). */
export function enterReport(reports: DetectorState['reports'], t: number): DetectorState['reports'] {
  return reports.cur && reports.cur.t === t ? reports : { prev: reports.cur, cur: { t, kinds: [] } };
}

/**
 * A state alarm continues when the device's previous report (in arrival
 * order, so blind-area back-fill behaves like live data) carried it too and
 * is not too far away in time.
 */
export function continuesStateAlarm(reports: DetectorState['reports'], kind: RaisedKind, t: number): boolean {
  const prev = reports.prev;
  return prev !== null && prev.kinds.includes(kind) && Math.abs(t - prev.t) <= T.stateAlarmMaxGapMs;
}

/** Attachments the device announced (JT/T 808 alarm label byte 14); 0 when it announced none. */
export function mediaCount(details: Alarm['details']): number {
  const label = details.label;
  if (typeof details.media_count === 'number') return details.media_count;
  if (typeof label !== 'string' || label.length !== 32 || !LABELLED_ITEMS.has(String(details.item))) return 0;
  const n = Number.parseInt(label.slice(28, 30), 16);
  return Number.isNaN(n) ? 0 : n;
}

function kindFields(d: Alarm, at: number, state: DetectorState, limitKmh: number | null): Record<string, number | string | null> {
  const kind: RaisedKind = d.kind;
  switch (kind) {
    case 'event.harsh_brake':
    case 'event.acceleration':
    case 'event.curve':
      // Trackers report that it happened, not the speed change.
      return { delta_kmh: null, duration_ms: typeof d.details.duration_ms === 'number' ? d.details.duration_ms : null };
    case 'event.overspeed': {
      const speed = d.position?.speed_kmh ?? null;
      return { limit_kmh: limitKmh, delta_kmh: speed !== null && limitKmh !== null ? round1(speed - limitKmh) : null };
    }
    case 'event.ignition_off':
      return tripFields(state.trip, at);
    case 'alarm.dsm.fatigue':
    case 'alarm.dsm.phone':
    case 'alarm.adas.collision':
    case 'alarm.adas.lane_departure':
    case 'alarm.bsd':
      return { alarm_level: d.level, media_count: mediaCount(d.details) };
    default:
      return {};
  }
}

/** Where it happened: the alarm's own location, else the last fix when recent enough. */
function alarmPosition(d: Alarm, at: number, state: DetectorState): { position: Detection['position']; source: string | null } {
  if (d.position) return { position: { ...d.position, timestamp: at }, source: 'alarm' };
  const f = state.last_fix;
  if (f && f.t <= at && at - f.t <= T.alarmPositionMaxAgeMs) return { position: fixPosition(f), source: 'last_fix' };
  return { position: null, source: null };
}

/**
 * The entry for a device alarm (`state` as before the alarm, for the trip and
 * the last fix). An alarm from a device whose clock is far ahead is dated when
 * it was received; its own time stays in `context.device_time`.
 */
export function deviceAlarmDetection(eventId: string, d: Alarm, state: DetectorState, limitKmh: number | null): Detection {
  const at = believableTime(d.occurred_at, d.received_at);
  const { position, source } = alarmPosition(d, at, state);
  return {
    kind: d.kind,
    from: at,
    to: at,
    cause: `alarm:${eventId}`,
    occurredAt: at,
    position,
    fields: kindFields(d, at, state, limitKmh),
    context: {
      rule: 'device_alarm',
      protocol: d.protocol,
      alarm_event_id: eventId,
      received_at: new Date(d.received_at).toISOString(),
      ...(at !== d.occurred_at ? { device_time: new Date(d.occurred_at).toISOString(), time_source: 'received_at' } : {}),
      device_level: d.level,
      position_source: source,
      raw: d.details,
    },
  };
}
