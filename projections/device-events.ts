/**
 * The one way detectors raise an entry of `GET /v1/events` and the webhook
 * feed: a `DeviceEventRaised` in `events-{device}`, with ids derived from
 * what caused it (so a replay re-derives the same ids and appends nothing),
 * and the severity rules of docs/api-decisions.md in one place.
 */
import type { DeviceEventRaised, Severity } from '../core/events.js';
import { contentUuid, deviceEventId } from '../core/ids.js';
import { streams } from '../core/streams.js';
import type { DerivedEvent } from './projection.js';

export type RaisedKind = DeviceEventRaised['data']['kind'];

/** docs/api-decisions.md, "Severity": fixed per kind, by |delta_kmh| for harsh driving, by excess speed for overspeed. */
export function severityOf(kind: RaisedKind, deltaKmh: number | null): Severity {
  switch (kind) {
    case 'event.sos':
    case 'alarm.adas.collision':
      return 'critical';
    case 'alarm.dsm.fatigue':
      return 'high';
    case 'alarm.dsm.phone':
    case 'alarm.adas.lane_departure':
    case 'alarm.bsd':
      return 'medium';
    case 'event.overspeed':
      return deltaKmh !== null && deltaKmh >= 20 ? 'high' : 'medium';
    case 'event.harsh_brake':
    case 'event.acceleration':
    case 'event.curve': {
      // A device-reported harsh event carries no speed change: medium, the middle band.
      if (deltaKmh === null) return 'medium';
      const size = Math.abs(deltaKmh);
      return size < 15 ? 'low' : size <= 25 ? 'medium' : 'high';
    }
    case 'geofence.enter':
    case 'geofence.exit':
    case 'geofence.dwell':
    case 'event.ignition_on':
    case 'event.ignition_off':
    case 'trip.completed':
    case 'idle.ended':
      return 'info';
  }
}

export interface RaiseInput {
  kind: RaisedKind;
  /** Unique description of what caused it, e.g. `harsh:{position event id}` or `geofence:{geo}:{fix event id}:enter`. */
  cause: string;
  customerId: string;
  deviceId: string;
  driverId: string | null;
  occurredAt: number;
  source: 'device' | 'server';
  position: DeviceEventRaised['data']['position'];
  /** Kind-specific payload fields (delta_kmh, limit_kmh, geofence_id, ...). */
  fields?: Record<string, number | string | null>;
  context?: Record<string, unknown>;
  media?: DeviceEventRaised['data']['media'];
}

export function raiseDeviceEvent(input: RaiseInput): DerivedEvent {
  const fields = input.fields ?? {};
  const delta = typeof fields.delta_kmh === 'number' ? fields.delta_kmh : null;
  return {
    stream: streams.deviceEvents(input.deviceId),
    event: {
      id: contentUuid('DeviceEventRaised', input.cause),
      type: 'DeviceEventRaised',
      data: {
        event_id: deviceEventId(input.occurredAt, input.cause),
        kind: input.kind,
        customer_id: input.customerId,
        device_id: input.deviceId,
        driver_id: input.driverId,
        occurred_at: input.occurredAt,
        severity: severityOf(input.kind, delta),
        source: input.source,
        position: input.position,
        fields,
        context: input.context ?? {},
        media: input.media ?? [],
      },
    },
  };
}
