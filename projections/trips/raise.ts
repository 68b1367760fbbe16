/**
 * The events a fold step raises: `trip.completed` when a trip closes and
 * `idle.ended` when an idle does, for GET /v1/events, the stream and webhooks.
 * Their ids come from the device and the start time, so a re-fold after a
 * late fix, or a replay, raises nothing new (the first one sent stands).
 */
import { raiseDeviceEvent } from '../device-events.js';
import type { DerivedEvent } from '../projection.js';
import type { TripWrite } from './fold.js';

const iso = (ms: number) => new Date(ms).toISOString();
const round3 = (n: number) => Math.round(n) / 1000;

export function raisedBy(writes: readonly TripWrite[], customerId: string, deviceId: string): DerivedEvent[] {
  const raised: DerivedEvent[] = [];
  for (const w of writes) {
    if ('delete' in w) continue;
    if (w.table === 'trips') {
      const { start, end } = w.row;
      raised.push(
        raiseDeviceEvent({
          kind: 'trip.completed',
          cause: `trip:${deviceId}:${start.t}`,
          customerId,
          deviceId,
          driverId: start.driver_id,
          occurredAt: end.t,
          source: 'server',
          position: { lat: end.lat, lng: end.lng, speed_kmh: end.speed_kmh, heading_deg: null, timestamp: end.t },
          fields: {
            trip_started_at: iso(start.t),
            trip_distance_km: round3(w.row.distance_m),
            trip_duration_s: Math.round((end.t - start.t) / 1000),
            trip_idle_s: Math.round(w.row.idle_ms / 1000),
            trip_max_speed_kmh: w.row.max_speed_kmh,
          },
        }),
      );
    } else if (w.table === 'idles' && w.row.end_t !== null) {
      const { start_t: startT, end_t: endT, lat, lng } = w.row;
      raised.push(
        raiseDeviceEvent({
          kind: 'idle.ended',
          cause: `idle:${deviceId}:${startT}`,
          customerId,
          deviceId,
          driverId: null,
          occurredAt: endT,
          source: 'server',
          position: { lat, lng, speed_kmh: 0, heading_deg: null, timestamp: startT },
          fields: { idle_started_at: iso(startT), idle_duration_s: Math.round((endT - startT) / 1000) },
        }),
      );
    }
  }
  return raised;
}
