/** Pure rule of the commands read model: a command's row is the command as its latest event left it. */
import type { RecordedEvent } from '../../core/event-store/port.js';
import type { CommandSnapshot, DeviceCommandEvent } from '../../core/events.js';
import { DEVICE_COMMAND_EVENT_TYPES } from '../../core/events/commands.js';

export function isDeviceCommandEvent(e: RecordedEvent): e is RecordedEvent<DeviceCommandEvent> {
  return DEVICE_COMMAND_EVENT_TYPES.has(e.type);
}

/** The row an event leaves, or null for events of other streams. */
export function commandAfter(e: RecordedEvent): CommandSnapshot | null {
  return isDeviceCommandEvent(e) ? e.data.command : null;
}
