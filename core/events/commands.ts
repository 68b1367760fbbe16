/**
 * Events of device commands (part of the DomainEvent union in core/events.ts),
 * all in the device's stream `commands-{device}`. Each carries the command as
 * it is after the event (`command`): webhook payloads, the live stream and the
 * read model are then built from one event alone, the same on every replay.
 */
import type { CommandStatus, CommandTypeName } from '../command-types.js';

/** What the unit answered, as the gateway decoded it. */
export interface CommandResponse {
  text: string | null;
  result_code: number | null;
  raw_hex: string;
}

/** A command as the API shows it, and as every event of it leaves it. */
export interface CommandSnapshot {
  command_id: string;
  device_id: string;
  customer_id: string;
  type: CommandTypeName;
  params: Record<string, string | number>;
  status: CommandStatus;
  /** Why a queued command is not sent yet (`vehicle_stopped` for an engine stop); null otherwise. */
  waiting_for: 'vehicle_stopped' | null;
  created_at: number;
  sent_at: number | null;
  acknowledged_at: number | null;
  completed_at: number | null;
  expires_at: number;
  response: CommandResponse | null;
  error: string | null;
  /** Times the gateway wrote it to a unit: a second send only after an unknown outcome (the retry-once rule). */
  send_attempts: number;
}

/** Fields every command event carries. */
interface CommandEventData {
  command_id: string;
  device_id: string;
  customer_id: string;
  at: number;
  command: CommandSnapshot;
}

export interface DeviceCommandQueued {
  type: 'DeviceCommandQueued';
  data: CommandEventData;
}

/** Written by the gateway once the bytes went to the unit's socket (`attempt` 2: the one resend after an unknown outcome). */
export interface DeviceCommandSent {
  type: 'DeviceCommandSent';
  data: CommandEventData & { attempt: number };
}

export interface DeviceCommandAcknowledged {
  type: 'DeviceCommandAcknowledged';
  data: CommandEventData;
}

export interface DeviceCommandSucceeded {
  type: 'DeviceCommandSucceeded';
  data: CommandEventData;
}

export interface DeviceCommandFailed {
  type: 'DeviceCommandFailed';
  data: CommandEventData;
}

/** Still queued at `expires_at`: it will never be sent. */
export interface DeviceCommandExpired {
  type: 'DeviceCommandExpired';
  data: CommandEventData;
}

export interface DeviceCommandCancelled {
  type: 'DeviceCommandCancelled';
  data: CommandEventData;
}

/** The gateway found the unit's protocol cannot carry it (a protocol bound after the command was queued). */
export interface DeviceCommandRejected {
  type: 'DeviceCommandRejected';
  data: CommandEventData;
}

/**
 * An Idempotency-Key used by a customer (stream `command-key-{customer}-{digest}`): the command it
 * created and a digest of the request, so a retry within 24 h gets that command and another request
 * under the same key is refused. Only the key's SHA-256 is kept.
 */
export interface CommandIdempotencyKeyUsed {
  type: 'CommandIdempotencyKeyUsed';
  data: { customer_id: string; key_sha256: string; request_sha256: string; command_id: string; device_id: string; used_at: number };
}

export type DeviceCommandEvent =
  | DeviceCommandQueued
  | DeviceCommandSent
  | DeviceCommandAcknowledged
  | DeviceCommandSucceeded
  | DeviceCommandFailed
  | DeviceCommandExpired
  | DeviceCommandCancelled
  | DeviceCommandRejected;

export const DEVICE_COMMAND_EVENT_TYPES: ReadonlySet<string> = new Set<DeviceCommandEvent['type']>([
  'DeviceCommandQueued',
  'DeviceCommandSent',
  'DeviceCommandAcknowledged',
  'DeviceCommandSucceeded',
  'DeviceCommandFailed',
  'DeviceCommandExpired',
  'DeviceCommandCancelled',
  'DeviceCommandRejected',
]);

/** Every event of device commands and their idempotency keys: the events projections of other areas pass over. */
type CommandAreaEvent = DeviceCommandEvent | CommandIdempotencyKeyUsed;
const COMMAND_AREA_TYPES: ReadonlySet<string> = new Set([...DEVICE_COMMAND_EVENT_TYPES, 'CommandIdempotencyKeyUsed']);

export function isCommandAreaEvent<E extends { type: string }>(e: E): e is Extract<E, { type: CommandAreaEvent['type'] }> {
  return COMMAND_AREA_TYPES.has(e.type);
}
