/**
 * The kinds of event a device can report or the server can detect, exactly as
 * docs/api-decisions.md names them for `GET /v1/events` and webhooks.
 */
export const EVENT_KINDS = [
  'position.updated',
  'device.online',
  'device.offline',
  'geofence.enter',
  'geofence.exit',
  'geofence.dwell',
  'event.harsh_brake',
  'event.acceleration',
  'event.curve',
  'event.overspeed',
  'event.sos',
  'event.ignition_on',
  'event.ignition_off',
  'alarm.dsm.fatigue',
  'alarm.dsm.phone',
  'alarm.adas.collision',
  'alarm.adas.lane_departure',
  'alarm.bsd',
  'command.sent',
  'command.succeeded',
  'command.failed',
  'command.expired',
  'trip.completed',
  'idle.ended',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** The subset a tracker can raise itself (the gateway maps protocol codes onto these). */
export type DeviceAlarmKind = Extract<
  EventKind,
  | 'event.harsh_brake'
  | 'event.acceleration'
  | 'event.curve'
  | 'event.overspeed'
  | 'event.sos'
  | 'event.ignition_on'
  | 'event.ignition_off'
  | 'alarm.dsm.fatigue'
  | 'alarm.dsm.phone'
  | 'alarm.adas.collision'
  | 'alarm.adas.lane_departure'
  | 'alarm.bsd'
>;

/** What happened to a device command (payload: the command), from its events in `commands-{device}`. */
export type CommandKind = Extract<EventKind, `command.${string}`>;
export const COMMAND_KINDS: readonly CommandKind[] = EVENT_KINDS.filter((k): k is CommandKind => k.startsWith('command.'));
