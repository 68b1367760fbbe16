/**
 * Decoded records become domain events. Event ids derive from the device and
 * the record's bytes (prefixed by its fix time, for index locality), so a
 * frame the device resends after a lost ack is stored once: the store ignores
 * ids it already holds. A fix that cannot be true (core/fix-plausibility.ts)
 * is stored with `valid: false` and its reason in the `implausible` attribute,
 * and lends no position to the alarms of its record.
 */
import type { DeviceClaim, DomainEvent } from '../core/events.js';
import type { EventToAppend } from '../core/event-store/port.js';
import { implausibility } from '../core/fix-plausibility.js';
import { timeOrderedContentUuid } from '../core/ids.js';
import type { DecodedRecord, ProtocolName } from './protocol.js';

export function recordsToEvents(
  records: readonly DecodedRecord[],
  device: DeviceClaim,
  protocol: ProtocolName,
  receivedAt: number,
): EventToAppend<DomainEvent>[] {
  const out: EventToAppend<DomainEvent>[] = [];
  for (const r of records) {
    const hasLocation = r.lat !== null && r.lng !== null;
    const implausible = hasLocation ? implausibility(r.lat!, r.lng!, r.speedKmh, r.fixTime) : null;
    if (hasLocation) {
      out.push({
        id: timeOrderedContentUuid(r.fixTime, 'position', device.device_id, r.raw),
        type: 'PositionRecorded',
        data: {
          device_id: device.device_id,
          customer_id: device.customer_id,
          protocol,
          fix_time: r.fixTime,
          received_at: receivedAt,
          valid: r.valid && implausible === null,
          lat: r.lat!,
          lng: r.lng!,
          speed_kmh: r.speedKmh,
          heading_deg: r.headingDeg,
          altitude_m: r.altitudeM,
          satellites: r.satellites,
          ignition: r.ignition,
          odometer_m: r.odometerM,
          attributes: implausible === null ? r.attributes : { ...r.attributes, implausible },
        },
      });
    } else if (r.alarms.length === 0 || r.ignition !== null) {
      // An alarm without a location is its own event; the ignition beside it is still the device's state.
      out.push({
        id: timeOrderedContentUuid(r.fixTime, 'status', device.device_id, r.raw),
        type: 'StatusReported',
        data: {
          device_id: device.device_id,
          customer_id: device.customer_id,
          protocol,
          at: r.fixTime,
          received_at: receivedAt,
          ignition: r.ignition,
          attributes: r.attributes,
        },
      });
    }
    const usableLocation = hasLocation && implausible === null;
    for (const alarm of r.alarms) {
      out.push({
        id: timeOrderedContentUuid(r.fixTime, 'alarm', device.device_id, alarm.kind, r.raw),
        type: 'AlarmReported',
        data: {
          device_id: device.device_id,
          customer_id: device.customer_id,
          protocol,
          kind: alarm.kind,
          occurred_at: r.fixTime,
          received_at: receivedAt,
          level: alarm.level ?? null,
          position: usableLocation ? { lat: r.lat!, lng: r.lng!, speed_kmh: r.speedKmh, heading_deg: r.headingDeg } : null,
          details: alarm.details ?? {},
        },
      });
    }
  }
  return out;
}
