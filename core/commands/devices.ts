/** Device commands: register a unit (claiming its IMEI and terminal number) and edit it. */
import type { Clock } from '../clock.js';
import type { DeviceClaim, DeviceRegistered, DeviceUpdated } from '../events.js';
import type { EventStore, LogPosition, RecordedEvent } from '../event-store/port.js';
import { newId, randomUuid } from '../ids.js';
import { isValidImei, normalizeTerminalId } from '../imei.js';
import { streams } from '../streams.js';
import { releaseClaim, takeClaim, type Claim } from './claims.js';
import { requireDriver } from './drivers.js';
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
}

export interface Registered {
  device_id: string;
  position: LogPosition;
}

/**
 * Registers a device: all or nothing. The IMEI is claimed, then the terminal
 * number; if the terminal is taken the IMEI is released before the refusal,
 * and the device exists only once both claims are held.
 */
export async function registerDevice(store: EventStore, clock: Clock, input: RegisterDeviceInput): Promise<Registered> {
  if (!isValidImei(input.imei)) {
    throw new CommandRejected('invalid', 'validation_failed', 'imei must be 15 digits with a valid Luhn check digit.', '/imei');
  }
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
    claimed_at: now,
  };

  const imeiClaim = await takeClaim(store, clock, {
    stream: streams.imei(input.imei),
    event: { id: randomUuid(), type: 'ImeiClaimed', data: claim },
    ownerOf: deviceClaimOwner,
  });
  if (!imeiClaim) throw new CommandRejected('conflict', 'imei_taken', 'This IMEI is already registered.', '/imei');

  let terminalClaim: Claim | null = null;
  if (terminalId) {
    terminalClaim = await takeClaim(store, clock, {
      stream: streams.terminal(terminalId),
      event: { id: randomUuid(), type: 'TerminalClaimed', data: claim },
      ownerOf: deviceClaimOwner,
    });
    if (!terminalClaim) {
      await releaseClaim(store, imeiClaim, {
        id: randomUuid(),
        type: 'ImeiReleased',
        data: { device_id: deviceId, imei: input.imei, released_at: clock.now() },
      });
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
    created_at: now,
  };
  const result = await store.appendToStream(streams.device(deviceId), [{ id: randomUuid(), type: 'DeviceRegistered', data: registered }], {
    expectedRevision: 'no_stream',
  });
  return { device_id: deviceId, position: result.position };
}

/** The device a live IMEI or terminal claim names; releases and other events hold nothing. */
function deviceClaimOwner(event: RecordedEvent): { ownerStream: string; claimedAt: number } | null {
  if (event.type !== 'ImeiClaimed' && event.type !== 'TerminalClaimed') return null;
  return { ownerStream: streams.device(event.data.device_id), claimedAt: event.data.claimed_at };
}

export type DeviceChanges = DeviceUpdated['data']['changes'];

/** The editable fields of a device as its own stream says they are now. */
interface DeviceState {
  revision: bigint;
  fields: Required<DeviceChanges>;
}

async function loadDevice(store: EventStore, customerId: string, deviceId: string): Promise<DeviceState> {
  let state: DeviceState | null = null;
  for (const event of await store.readStream(streams.device(deviceId))) {
    if (event.type === 'DeviceRegistered') {
      if (event.data.customer_id !== customerId) break; // another tenant's device is as unknown as a made-up id
      const d = event.data;
      state = { revision: event.revision, fields: { name: d.name, group_id: d.group_id, driver_id: d.driver_id, speed_limit_kmh: d.speed_limit_kmh ?? null } };
    } else if (state) {
      state.revision = event.revision;
      if (event.type === 'DeviceUpdated') Object.assign(state.fields, event.data.changes);
    }
  }
  if (!state) throw new CommandRejected('not_found', 'not_found', `No device ${deviceId}.`);
  return state;
}

/**
 * Merge-patches a device (null clears). Only the fields that change are
 * written; an edit that changes nothing writes nothing and returns null.
 */
export async function updateDevice(
  store: EventStore,
  clock: Clock,
  input: { customer_id: string; device_id: string; changes: DeviceChanges },
): Promise<LogPosition | null> {
  const device = await loadDevice(store, input.customer_id, input.device_id);
  if (input.changes.driver_id) await requireDriver(store, input.customer_id, input.changes.driver_id, '/driver_id');
  const changes: DeviceChanges = {};
  for (const field of ['name', 'group_id', 'driver_id', 'speed_limit_kmh'] as const) {
    const value = input.changes[field];
    if (value !== undefined && value !== device.fields[field]) (changes as Record<string, unknown>)[field] = value;
  }
  if (Object.keys(changes).length === 0) return null;
  // Connectivity events land on the same stream, so `any`: an edit never conflicts with a device coming online.
  const result = await store.appendToStream(streams.device(input.device_id), [
    {
      id: randomUuid(),
      type: 'DeviceUpdated',
      data: { device_id: input.device_id, customer_id: input.customer_id, changes, updated_at: clock.now() },
    },
  ]);
  return result.position;
}
