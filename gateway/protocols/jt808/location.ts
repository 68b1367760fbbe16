/** The location report body (0x0200, and inside 0x0704 / 0x0201 / 0x0210) as a record in our units. */
import { DecodeError, u16At, u32At } from '../../codec/reader.js';
import type { DecodedRecord, SessionInfo } from '../../protocol.js';
import { addAlarmBits } from './alarms.js';
import { decodeItems } from './items.js';
import { DEFAULT_ZONE_MINUTES, bcdTime, parseZoneText } from './time.js';

/** alarm flags · status · lat · lng · altitude · speed · direction · BCD time. */
export const LOCATION_FIXED_BYTES = 28;

/** One location body `buf[start, end)` as a record in our units. */
export function decodeLocation(buf: Buffer, start: number, end: number, session: SessionInfo): DecodedRecord {
  if (end - start < LOCATION_FIXED_BYTES) {
    throw new DecodeError('truncated', `location body of ${end - start} byte(s), needs ${LOCATION_FIXED_BYTES}`);
  }
  const alarmFlags = u32At(buf, start);
  const status = u32At(buf, start + 4);
  const latRaw = u32At(buf, start + 8);
  const lngRaw = u32At(buf, start + 12);
  const valid = (status & 0x02) !== 0;
  // No fix and 0/0: the terminal has no location to report, not a point in the Gulf of Guinea.
  const located = valid || latRaw !== 0 || lngRaw !== 0;
  const record: DecodedRecord = {
    fixTime: 0,
    valid,
    lat: located ? ((status & 0x04) !== 0 && latRaw !== 0 ? -latRaw : latRaw) / 1e6 : null,
    lng: located ? ((status & 0x08) !== 0 && lngRaw !== 0 ? -lngRaw : lngRaw) / 1e6 : null,
    altitudeM: (u16At(buf, start + 16) << 16) >> 16,
    speedKmh: u16At(buf, start + 18) / 10,
    headingDeg: u16At(buf, start + 20),
    satellites: null,
    ignition: (status & 0x01) !== 0,
    odometerM: null,
    alarms: [],
    attributes: { alarm_flags: alarmFlags, status_flags: status },
    raw: buf.subarray(start, end),
  };
  if (alarmFlags !== 0) addAlarmBits(record, alarmFlags, session.model);
  if (end > start + LOCATION_FIXED_BYTES) decodeItems(buf, start + LOCATION_FIXED_BYTES, end, record, session);
  const zoneText = record.attributes.timezone;
  const zone = (typeof zoneText === 'string' ? parseZoneText(zoneText) : null) ?? session.timezoneMinutes ?? DEFAULT_ZONE_MINUTES;
  const fixTime = bcdTime(buf, start + 22, zone);
  if (Number.isNaN(fixTime)) {
    // A garbled clock must not stall the terminal's queue: keep the record at arrival time.
    record.fixTime = session.now;
    record.valid = false;
    record.attributes.device_time_invalid = buf.toString('hex', start + 22, start + 28);
  } else {
    record.fixTime = fixTime;
  }
  return record;
}
