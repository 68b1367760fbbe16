/** Device commands: register a unit (claiming its IMEI and terminal number) and edit it. */
import type { Clock } from '../clock.js';
import type { DeviceClaim, DeviceProtocol, DeviceRegistered, DeviceUpdated } from '../events.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { newId } from '../ids.js';
import { isValidImei, normalizeTerminalId } from '../imei.js';
import { streams } from '../streams.js';
import { type Claim, releaseClaim, takeClaim } from './claims.js';
import { requireDriver } from './drivers.js';
import { type Aggregate, type NewEvent, handle, load } from './handler.js';
import { CommandRejected } from './rejection.js';

export interface RegisterDeviceInput {
  customer_id: string;
  imei: string;
  model: string;
  name?: string | null;
  group_id?: string | null;
  driver_id?: string | null;
  /** JT/T 808 terminal phone number (digits); leading zeros are not significant. */
  terminal_id?: string | null;
  speed_limit_kmh?: number | null;
  /** The only protocol the unit may log in with; absent: the one of its first connection. */
  protocol?: DeviceProtocol | null;
}

export interface Registered {
  device_id: string;
  position: LogPosition;
}

export type DeviceChanges = DeviceUpdated['data']['changes'];

/**
 * What commands need of a device: its owner, editable fields and protocol (fixed at registration or
 * bound at its first connection); other connectivity events on its stream change none of them.
 */
export type DeviceState = { customer_id: string; fields: Required<DeviceChanges>; protocol: DeviceProtocol | null } | null;

const EDITABLE = ['name', 'group_id', 'driver_id', 'speed_limit_kmh', 'command_texts'] as const;

export const deviceStream: Aggregate<DeviceState> = {
  initial: null,
  evolve(state, event) {
    if (event.type === 'DeviceRegistered') {
      const d = event.data;
      return {
        customer_id: d.customer_id,
        fields: { name: d.name, group_id: d.group_id, driver_id: d.driver_id, speed_limit_kmh: d.speed_limit_kmh ?? null, command_texts: null },
        protocol: d.protocol ?? null,
      };
    }
    if (event.type === 'DeviceUpdated' && state) return { ...state, fields: { ...state.fields, ...event.data.changes } };
    if (event.type === 'DeviceProtocolBound' && state) return { ...state, protocol: event.data.protocol };
    return state;
  },
};

/** Refused before anything is claimed. */
export function checkRegistration(input: RegisterDeviceInput): void {
  if (!isValidImei(input.imei)) {
    throw new CommandRejected('invalid', 'validation_failed', 'imei must be 15 digits with a valid Luhn check digit.', '/imei');
  }
}

export function decideRegisterDevice(state: DeviceState, registered: DeviceRegistered['data']): NewEvent[] {
  if (state) throw new CommandRejected('conflict', 'already_exists', `device ${registered.device_id} already exists`);
  return [{ type: 'DeviceRegistered', data: registered }];
}

/**
 * Registers a device: all or nothing. The IMEI is claimed, then the terminal
 * number; if the terminal is taken the IMEI is released before the refusal,
 * and the device exists only once both claims are held.
 */
export async function registerDevice(store: EventStore, clock: Clock, input: RegisterDeviceInput): Promise<Registered> {
  checkRegistration(input);
  if (input.driver_id) await requireDriver(store, input.customer_id, input.driver_id, '/driver_id');
  const now = clock.now();
  const deviceId = newId('dev', now);
  const terminalId = input.terminal_id ? normalizeTerminalId(input.terminal_id) || null : null;
  const claim: DeviceClaim = {
    device_id: deviceId,
    customer_id: input.customer_id,
    imei: input.imei,
    model: input.model,
    terminal_id: terminalId,
    protocol: input.protocol ?? null,
    claimed_at: now,
  };

  const imeiClaim = await takeClaim(store, clock, { stream: streams.imei(input.imei), event: { type: 'ImeiClaimed', data: claim } });
  if (!imeiClaim) throw new CommandRejected('conflict', 'imei_taken', 'This IMEI is already registered.', '/imei');

  let terminalClaim: Claim | null = null;
  if (terminalId) {
    terminalClaim = await takeClaim(store, clock, { stream: streams.terminal(terminalId), event: { type: 'TerminalClaimed', data: claim } });
    if (!terminalClaim) {
      await releaseClaim(store, imeiClaim, { type: 'ImeiReleased', data: { device_id: deviceId, imei: input.imei, released_at: clock.now() } });
      throw new CommandRejected('conflict', 'terminal_taken', `terminal_id ${terminalId} is already registered.`, '/terminal_id');
    }
  }

  const registered: DeviceRegistered['data'] = {
    device_id: deviceId,
    customer_id: input.customer_id,
    imei: input.imei,
    model: input.model,
    name: input.name ?? null,
    group_id: input.group_id ?? null,
    driver_id: input.driver_id ?? null,
    terminal_id: terminalId,
    speed_limit_kmh: input.speed_limit_kmh ?? null,
    protocol: input.protocol ?? null,
    created_at: now,
  };
  const { position } = await handle(store, { stream: streams.device(deviceId), aggregate: deviceStream, decide: (state) => decideRegisterDevice(state, registered) });
  return { device_id: deviceId, position: position! };
}

/** Another tenant's device is as unknown as a made-up id. */
export function checkDevice(state: DeviceState, customerId: string, deviceId: string): NonNullable<DeviceState> {
  if (state?.customer_id !== customerId) throw new CommandRejected('not_found', 'not_found', `No device ${deviceId}.`);
  return state;
}

/** Fields are scalars or, for `command_texts`, a small flat object. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && (a as Record<string, unknown>)[k] === (b as Record<string, unknown>)[k]);
}

/** Only the fields that change are written; an edit that changes nothing writes nothing. */
export function decideUpdateDevice(state: DeviceState, command: { customer_id: string; device_id: string; changes: DeviceChanges }, now: number): NewEvent[] {
  const device = checkDevice(state, command.customer_id, command.device_id);
  const changes: DeviceChanges = {};
  for (const field of EDITABLE) {
    const value = command.changes[field];
    if (value !== undefined && !sameValue(value, device.fields[field])) (changes as Record<string, unknown>)[field] = value;
  }
  if (Object.keys(changes).length === 0) return [];
  return [{ type: 'DeviceUpdated', data: { device_id: command.device_id, customer_id: command.customer_id, changes, updated_at: now } }];
}

/**
 * Merge-patches a device (null clears); returns null when nothing changed.
 * The device is looked up before the driver it names, so an unknown device is
 * not found whatever the driver.
 */
export async function updateDevice(
  store: EventStore,
  clock: Clock,
  input: { customer_id: string; device_id: string; changes: DeviceChanges },
): Promise<LogPosition | null> {
  const stream = streams.device(input.device_id);
  const loaded = await load(store, stream, deviceStream);
  checkDevice(loaded.state, input.customer_id, input.device_id);
  if (input.changes.driver_id) await requireDriver(store, input.customer_id, input.changes.driver_id, '/driver_id');
  const now = clock.now();
  const { position } = await handle(store, { stream, aggregate: deviceStream, decide: (state) => decideUpdateDevice(state, input, now) }, { loaded });
  return position;
}
