/**
 * Device commands seen from both ends in gateway tests: a registered unit that logs in over
 * TCP, commands queued in the store as the API queues them, read back from the device's command
 * stream, and taken off the unit's socket as the frames it receives.
 */
import { systemClock } from '../../core/clock.js';
import { deviceCommandsStream, newCommand, queueCommand, type NewCommandInput } from '../../core/commands/device-commands.js';
import { load } from '../../core/commands/handler.js';
import type { DeviceClaim, DeviceProtocol } from '../../core/events.js';
import { imeiFrom } from '../../core/imei.js';
import type { CommandSnapshot } from '../../core/events/commands.js';
import type { EventStore } from '../../core/event-store/port.js';
import { randomUuid } from '../../core/ids.js';
import { streams } from '../../core/streams.js';
import type { ProtocolModule } from '../../gateway/protocol.js';
import type { EncodeContext } from '../simulator/encoders/types.js';
import { encoders } from '../simulator/run.js';
import { login } from './device-login.js';
import type { GatewayHarness } from './gateway-harness.js';
import { TcpClient } from './tcp-client.js';
import { eventually } from './wait.js';

export interface TestUnit {
  ctx: EncodeContext;
  device: DeviceClaim;
  /** Queues a command as the API does; `protocol` is the device's as the API knew it (null: not bound yet). */
  queue(request: Pick<NewCommandInput, 'type' | 'params' | 'ttl_s'>, protocol?: DeviceProtocol | null): Promise<CommandSnapshot>;
  /** Opens a connection to the harness's listener of the unit's protocol and logs in as a real unit does. */
  connect(port?: number): Promise<TcpClient>;
}

/** A unit of `protocol` registered in the harness's store, its IMEI from the 14 digits given. */
export async function testUnit(h: GatewayHarness, protocol: DeviceProtocol, digits: string): Promise<TestUnit> {
  const imei = imeiFrom(digits);
  const ctx: EncodeContext = { imei, terminalId: imei.slice(3), serial: 1 };
  const device = await h.register(imei, protocol === 'jt808' ? { terminalId: ctx.terminalId! } : {});
  return {
    ctx,
    device,
    queue: (request, bound = protocol) => queueFor(h.store, device, request, bound),
    async connect(port = h.ports[protocol]) {
      const client = await TcpClient.open(port);
      await login(client, encoders[protocol], ctx);
      return client;
    },
  };
}

/** Queues a command for `device` as POST /v1/devices/{id}/commands does; resolves with it. */
export async function queueFor(
  store: EventStore,
  device: DeviceClaim,
  request: Pick<NewCommandInput, 'type' | 'params' | 'ttl_s'>,
  protocol: DeviceProtocol | null = null,
): Promise<CommandSnapshot> {
  const command = newCommand({ ...request, customer_id: device.customer_id, device_id: device.device_id }, { protocol }, `cmd_${randomUuid()}`, systemClock.now());
  await queueCommand(store, command);
  return command;
}

/** The command as the device's command stream has it now. */
export async function commandNow(store: EventStore, command: Pick<CommandSnapshot, 'device_id' | 'command_id'>): Promise<CommandSnapshot> {
  const { state } = await load(store, streams.commands(command.device_id), deviceCommandsStream);
  const found = state.get(command.command_id);
  if (!found) throw new Error(`no command ${command.command_id}`);
  return found;
}

/** Waits until the command has `status`; resolves with it. */
export function commandReaches(store: EventStore, command: Pick<CommandSnapshot, 'device_id' | 'command_id'>, status: CommandSnapshot['status']): Promise<CommandSnapshot> {
  return eventually(async () => {
    const now = await commandNow(store, command);
    return now.status === status ? now : undefined;
  }, `command ${command.command_id} ${status}`);
}

/** The next whole frame the unit receives, cut by the protocol's own framer. */
export function nextFrame(client: TcpClient, protocol: ProtocolModule, timeoutMs = 10_000): Promise<Buffer> {
  return client.receive((buf) => {
    const split = protocol.splitFrames(buf);
    const first = split.frames[0];
    if (!first) return null;
    const end = first.byteOffset - buf.byteOffset + first.length;
    return { value: Buffer.from(first), consumed: end };
  }, timeoutMs);
}
