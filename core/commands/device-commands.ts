/**
 * Device commands: the aggregate of one device's commands (stream
 * `commands-{device}`) and its pure decisions. The API queues and cancels;
 * the expiry sweep expires; the gateway marks sent, records replies and time-
 * outs. Every decision appends with the revision it read, so a send racing a
 * cancel or an expiry is settled by the store: whichever appends first wins,
 * the other decides again on the new state.
 *
 * Retry-once rule: the gateway appends `DeviceCommandSent` before it writes
 * the bytes. A `sent` command with no reply after a gateway restart has an
 * unknown outcome: it may be sent once more (`markSent` with `resend`,
 * attempt 2); after that a missing reply is `failed` with `no_reply`.
 */
import type { Clock } from '../clock.js';
import type { DeviceProtocol } from '../events.js';
import type { CommandSnapshot, DeviceCommandEvent } from '../events/commands.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { checkCommandParams, commandTtlS, commandTypesFor, type CommandTypeName } from '../command-types.js';
import { streams } from '../streams.js';
import { checkDevice, deviceStream } from './devices.js';
import { type Aggregate, type NewEvent, handle, load } from './handler.js';
import { CommandRejected } from './rejection.js';

/** A device's commands by id, as its stream says they are now. */
export type DeviceCommandsState = ReadonlyMap<string, CommandSnapshot>;

export const deviceCommandsStream: Aggregate<DeviceCommandsState> = {
  initial: new Map(),
  evolve(state, event) {
    if (!event.type.startsWith('DeviceCommand')) return state;
    const command = (event as DeviceCommandEvent).data.command;
    return new Map(state).set(command.command_id, command);
  },
};

/** Sends of one command at most: the first, and one after an unknown outcome. */
export const MAX_SEND_ATTEMPTS = 2;

/** Statuses a command no longer leaves. */
export const FINAL_STATUSES: ReadonlySet<CommandSnapshot['status']> = new Set(['succeeded', 'failed', 'expired', 'cancelled', 'rejected']);

type Transition = DeviceCommandEvent['type'];

/** The event that leaves the command as `after`. */
function transition(type: Transition, after: CommandSnapshot, at: number): NewEvent {
  const data = { command_id: after.command_id, device_id: after.device_id, customer_id: after.customer_id, at, command: after };
  return type === 'DeviceCommandSent' ? { type, data: { ...data, attempt: after.send_attempts } } : ({ type, data } as NewEvent);
}

/** Another customer's command is as unknown as a made-up id. */
export function requireCommand(state: DeviceCommandsState, commandId: string, customerId?: string): CommandSnapshot {
  const command = state.get(commandId);
  if (!command || (customerId !== undefined && command.customer_id !== customerId)) {
    throw new CommandRejected('not_found', 'not_found', `command ${commandId} does not exist`);
  }
  return command;
}

export function decideQueue(state: DeviceCommandsState, command: CommandSnapshot): NewEvent[] {
  // A retry under the same Idempotency-Key after a crash may queue the id it claimed: once only.
  if (state.has(command.command_id)) return [];
  return [transition('DeviceCommandQueued', command, command.created_at)];
}

export function decideCancel(state: DeviceCommandsState, input: { customer_id: string; command_id: string }, now: number): NewEvent[] {
  const command = requireCommand(state, input.command_id, input.customer_id);
  if (command.status === 'cancelled') return [];
  if (command.status !== 'queued') {
    throw new CommandRejected('conflict', 'command_not_cancellable', `command ${command.command_id} is ${command.status}: only a queued command can be cancelled.`);
  }
  return [transition('DeviceCommandCancelled', { ...command, status: 'cancelled', waiting_for: null, completed_at: now }, now)];
}

/** A queued command at or past its expiry; nothing for one that was sent, cancelled or is not due. */
export function decideExpire(state: DeviceCommandsState, commandId: string, now: number): NewEvent[] {
  const command = requireCommand(state, commandId);
  if (command.status !== 'queued' || now < command.expires_at) return [];
  return [transition('DeviceCommandExpired', { ...command, status: 'expired', waiting_for: null, completed_at: now, error: 'expired' }, now)];
}

/**
 * The gateway is about to write the command: `sent`, or expired when its time is up (expiry wins).
 * `resend`: a `sent` command whose outcome the gateway lost (a restart), sent once more.
 */
export function decideMarkSent(state: DeviceCommandsState, commandId: string, now: number, options: { resend?: boolean } = {}): NewEvent[] {
  const command = requireCommand(state, commandId);
  if (command.status === 'queued' && now >= command.expires_at) return decideExpire(state, commandId, now);
  const resendable = options.resend === true && command.status === 'sent' && command.send_attempts < MAX_SEND_ATTEMPTS;
  if (command.status !== 'queued' && !resendable) {
    throw new CommandRejected('conflict', 'command_not_sendable', `command ${commandId} is ${command.status} after ${command.send_attempts} send(s): it is not sent again.`);
  }
  const sent: CommandSnapshot = { ...command, status: 'sent', waiting_for: null, sent_at: now, send_attempts: command.send_attempts + 1 };
  return [transition('DeviceCommandSent', sent, now)];
}

/** What the unit answered (gateway/protocol.ts CommandReply, bytes as hex). */
export interface CommandReplyInput {
  outcome: 'acknowledged' | 'succeeded' | 'failed' | 'unsupported' | 'bad_message' | 'imei_mismatch';
  text: string | null;
  result_code: number | null;
  raw_hex: string;
}

/** A reply to a sent or acknowledged command; a late reply to a finished one is kept out (nothing appended). */
export function decideRecordReply(state: DeviceCommandsState, commandId: string, reply: CommandReplyInput, now: number): NewEvent[] {
  const command = requireCommand(state, commandId);
  if (command.status !== 'sent' && command.status !== 'acknowledged') return [];
  const response = { text: reply.text, result_code: reply.result_code, raw_hex: reply.raw_hex };
  if (reply.outcome === 'acknowledged') {
    if (command.status === 'acknowledged') return [];
    return [transition('DeviceCommandAcknowledged', { ...command, status: 'acknowledged', acknowledged_at: now, response }, now)];
  }
  const succeeded = reply.outcome === 'succeeded';
  const after: CommandSnapshot = {
    ...command,
    status: succeeded ? 'succeeded' : 'failed',
    completed_at: now,
    response,
    error: succeeded ? null : reply.outcome === 'failed' ? 'device_failed' : reply.outcome,
  };
  return [transition(succeeded ? 'DeviceCommandSucceeded' : 'DeviceCommandFailed', after, now)];
}

/** A sent (or only acknowledged) command whose reply never came: failed with `no_reply`. */
export function decideMarkTimedOut(state: DeviceCommandsState, commandId: string, now: number): NewEvent[] {
  const command = requireCommand(state, commandId);
  if (command.status !== 'sent' && command.status !== 'acknowledged') return [];
  return [transition('DeviceCommandFailed', { ...command, status: 'failed', completed_at: now, error: 'no_reply' }, now)];
}

/**
 * An engine command the unit acknowledged, then its output as its next status record reports it
 * (each protocol's `relayCheck`): `succeeded` when the relay is as asked, else `failed`
 * with `output_unchanged`. `asAsked` true with no record is the unit's word standing.
 */
export function decideOutputReported(state: DeviceCommandsState, commandId: string, asAsked: boolean, now: number): NewEvent[] {
  const command = requireCommand(state, commandId);
  if (command.status !== 'acknowledged') return [];
  const after: CommandSnapshot = { ...command, status: asAsked ? 'succeeded' : 'failed', completed_at: now, error: asAsked ? null : 'output_unchanged' };
  return [transition(asAsked ? 'DeviceCommandSucceeded' : 'DeviceCommandFailed', after, now)];
}

/** A queued command the unit's protocol cannot carry (learnt once the protocol was bound). */
export function decideReject(state: DeviceCommandsState, commandId: string, error: string, now: number): NewEvent[] {
  const command = requireCommand(state, commandId);
  if (command.status !== 'queued') return [];
  return [transition('DeviceCommandRejected', { ...command, status: 'rejected', waiting_for: null, completed_at: now, error }, now)];
}

/** Whether a `sent` command with no reply may be written once more after its outcome was lost. */
export function mayResend(command: CommandSnapshot): boolean {
  return command.status === 'sent' && command.send_attempts < MAX_SEND_ATTEMPTS;
}

export interface NewCommandInput {
  customer_id: string;
  device_id: string;
  type: CommandTypeName;
  params?: Record<string, unknown>;
  ttl_s?: number;
}

/**
 * The command a request asks for, checked against the device (its owner, its protocol's types) and
 * the catalogue (params, time to live). `protocol` null: not bound yet, every type is accepted.
 */
export function newCommand(input: NewCommandInput, device: { protocol: DeviceProtocol | null }, commandId: string, now: number): CommandSnapshot {
  const supported = commandTypesFor(device.protocol);
  if (!supported.includes(input.type)) {
    throw new CommandRejected('invalid', 'command_type_unsupported', `The ${device.protocol} protocol has no command ${input.type}; it supports ${supported.join(', ')}.`, '/type');
  }
  const params = checkCommandParams(input.type, input.params ?? {});
  const ttlS = commandTtlS(input.type, input.ttl_s);
  return {
    command_id: commandId,
    device_id: input.device_id,
    customer_id: input.customer_id,
    type: input.type,
    params,
    status: 'queued',
    waiting_for: input.type === 'engine_stop' && params.when !== 'now' ? 'vehicle_stopped' : null,
    created_at: now,
    sent_at: null,
    acknowledged_at: null,
    completed_at: null,
    expires_at: now + ttlS * 1000,
    response: null,
    error: null,
    send_attempts: 0,
  };
}

/** The device a command is for, or the not-found refusal (another customer's device included). */
export async function loadCommandDevice(store: EventStore, customerId: string, deviceId: string): Promise<{ protocol: DeviceProtocol | null }> {
  const device = checkDevice((await load(store, streams.device(deviceId), deviceStream)).state, customerId, deviceId);
  return { protocol: device.protocol };
}

/**
 * A device's commands the gateway still has work for, in the order they were queued: queued ones (to send, hold or
 * expire, as dispatchDecision says) and sent or acknowledged ones (a reply to wait for; after a restart
 * a `sent` one is resent once when `mayResend`, else timed out).
 */
export async function unfinishedCommands(store: EventStore, deviceId: string): Promise<CommandSnapshot[]> {
  const { state } = await load(store, streams.commands(deviceId), deviceCommandsStream);
  // The state keeps each command where its stream first had it: queue order, whatever the API nodes' clocks said.
  return [...state.values()].filter((c) => !FINAL_STATUSES.has(c.status));
}

/** Runs one decision on a device's commands, deciding again when another writer got in first. */
function onCommands(store: EventStore, deviceId: string, decide: (state: DeviceCommandsState) => NewEvent[]) {
  return handle(store, { stream: streams.commands(deviceId), aggregate: deviceCommandsStream, decide });
}

/** Appends a command built by `newCommand` (after its device was checked). */
export async function queueCommand(store: EventStore, command: CommandSnapshot): Promise<LogPosition | null> {
  return (await onCommands(store, command.device_id, (state) => decideQueue(state, command))).position;
}

export interface CommandRef {
  device_id: string;
  command_id: string;
}

/** The command as the append left it, and where it landed (null: nothing changed). */
export interface CommandOutcome {
  command: CommandSnapshot;
  position: LogPosition | null;
}

async function decideOn(store: EventStore, ref: CommandRef, decide: (state: DeviceCommandsState) => NewEvent[]): Promise<CommandOutcome> {
  let latest: CommandSnapshot | undefined;
  const handled = await onCommands(store, ref.device_id, (state) => {
    latest = state.get(ref.command_id);
    return decide(state);
  });
  const last = handled.events.at(-1) as (NewEvent & DeviceCommandEvent) | undefined;
  return { command: last ? last.data.command : latest!, position: handled.position };
}

export function cancelCommand(store: EventStore, clock: Clock, input: CommandRef & { customer_id: string }): Promise<CommandOutcome> {
  return decideOn(store, input, (state) => decideCancel(state, input, clock.now()));
}

export function expireCommand(store: EventStore, clock: Clock, ref: CommandRef): Promise<CommandOutcome> {
  return decideOn(store, ref, (state) => decideExpire(state, ref.command_id, clock.now()));
}

/** For the gateway, before it writes the bytes: write them only when the outcome's status is `sent`. */
export function markSent(store: EventStore, clock: Clock, ref: CommandRef & { resend?: boolean }): Promise<CommandOutcome> {
  return decideOn(store, ref, (state) => decideMarkSent(state, ref.command_id, clock.now(), { resend: ref.resend }));
}

export function recordReply(store: EventStore, clock: Clock, ref: CommandRef & { reply: CommandReplyInput }): Promise<CommandOutcome> {
  return decideOn(store, ref, (state) => decideRecordReply(state, ref.command_id, ref.reply, clock.now()));
}

export function markTimedOut(store: EventStore, clock: Clock, ref: CommandRef): Promise<CommandOutcome> {
  return decideOn(store, ref, (state) => decideMarkTimedOut(state, ref.command_id, clock.now()));
}

export function rejectCommand(store: EventStore, clock: Clock, ref: CommandRef & { error: string }): Promise<CommandOutcome> {
  return decideOn(store, ref, (state) => decideReject(state, ref.command_id, ref.error, clock.now()));
}

export function recordOutput(store: EventStore, clock: Clock, ref: CommandRef & { asAsked: boolean }): Promise<CommandOutcome> {
  return decideOn(store, ref, (state) => decideOutputReported(state, ref.command_id, ref.asAsked, clock.now()));
}
