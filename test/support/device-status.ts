/** A device's read-model status, folded from the store's events as the devices projection does. */
import type { RecordedEvent } from '../../core/event-store/port.js';
import { evolveDevice, type DeviceRow } from '../../projections/devices/evolve.js';

/** The status of `deviceId` after `events` (a registered device, never connected, to start from). */
export function statusFrom(events: readonly RecordedEvent[], deviceId: string): DeviceRow['status'] {
  let row: DeviceRow | null = {
    device_id: deviceId, customer_id: 'cus_test', imei: '', model: 'test-unit', name: null, group_id: null, driver_id: null,
    terminal_id: null, speed_limit_kmh: null, command_texts: null, status: 'never_connected', protocol: null, connection_id: null, last_seen_at: null,
    created_at: 0, updated_at: 0,
  };
  for (const e of events) if (e.stream === `device-${deviceId}`) row = evolveDevice(row, e);
  return row!.status;
}

