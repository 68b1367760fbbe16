/**
 * Pure rule for a device's latest position: the newest usable fix wins (not
 * invalid, not dated in the future, see usable-fix.ts); late fixes never go
 * back in time.
 */
import type { PositionRecorded } from '../../core/events.js';
import { isUsableFix } from '../usable-fix.js';

export interface LatestPositionRow {
  device_id: string;
  customer_id: string;
  lat: number;
  lng: number;
  speed_kmh: number | null;
  heading_deg: number | null;
  altitude_m: number | null;
  satellites: number | null;
  ignition: number | null;
  fix_time: number;
  received_at: number;
  /** The unit's own odometer, and the fix's decoded values as the gateway stored them (the API names them, api/sensor-attributes.ts). */
  odometer_m: number | null;
  attributes: PositionRecorded['data']['attributes'];
}

export function evolveLatestPosition(
  row: LatestPositionRow | null,
  e: PositionRecorded,
): LatestPositionRow | null {
  const d = e.data;
  if (!isUsableFix(d)) return row;
  if (row && row.fix_time > d.fix_time) return row;
  return {
    device_id: d.device_id,
    customer_id: d.customer_id,
    lat: d.lat,
    lng: d.lng,
    speed_kmh: d.speed_kmh,
    heading_deg: d.heading_deg,
    altitude_m: d.altitude_m,
    satellites: d.satellites,
    ignition: d.ignition === null ? null : d.ignition ? 1 : 0,
    fix_time: d.fix_time,
    received_at: d.received_at,
    odometer_m: d.odometer_m,
    attributes: d.attributes,
  };
}
