/**
 * A customer's request for a device command, with its optional Idempotency-Key.
 * The key is claimed in a stream of its own (`command-key-{customer}-{digest}`)
 * with an expected revision, so two nodes given the same key at once create one
 * command: the loser reads the winner's claim. Within 24 h the same request
 * under the key gets the command it created; another request (other device,
 * type, params or ttl_s) is refused with 422 `idempotency_key_reused`, as the
 * IETF Idempotency-Key draft advises. After 24 h the key may be used afresh.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { CommandIdempotencyKeyUsed } from '../events/commands.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { newId } from '../ids.js';
import { streams } from '../streams.js';
import { type NewCommandInput, loadCommandDevice, newCommand, queueCommand } from './device-commands.js';
import { type Aggregate, type NewEvent, handle } from './handler.js';
import { CommandRejected } from './rejection.js';

export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

type KeyUse = CommandIdempotencyKeyUsed['data'];

/** The key's latest use, if any. */
export const commandKeyStream: Aggregate<KeyUse | null> = {
  initial: null,
  evolve: (state, event) => (event.type === 'CommandIdempotencyKeyUsed' ? event.data : state),
};

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What identifies a request under a key: the device and the body, params in name order. */
export function requestDigest(input: NewCommandInput): string {
  const params = Object.fromEntries(Object.entries(input.params ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return sha256(JSON.stringify([input.device_id, input.type, params, input.ttl_s ?? null]));
}

/** Uses the key for this request, or says which command an earlier use of it created. */
export function decideKeyUse(state: KeyUse | null, use: KeyUse, now: number): NewEvent[] {
  if (!state || now - state.used_at >= IDEMPOTENCY_WINDOW_MS) return [{ type: 'CommandIdempotencyKeyUsed', data: use }];
  if (state.request_sha256 !== use.request_sha256) {
    throw new CommandRejected('unprocessable', 'idempotency_key_reused', 'This Idempotency-Key was used in the last 24 hours for another request; use a new key for a new command.');
  }
  return [];
}

export interface CommandRequest extends NewCommandInput {
  idempotency_key?: string;
}

export interface Requested {
  command_id: string;
  /** Where the queued event landed; null when an earlier request under the key had queued it. */
  position: LogPosition | null;
  /** True when the answer is the command an earlier request under the same key created. */
  replayed: boolean;
}

/** Checks the request against the device and the catalogue, takes the key if there is one, and queues the command. */
export async function requestCommand(store: EventStore, clock: Clock, input: CommandRequest): Promise<Requested> {
  const device = await loadCommandDevice(store, input.customer_id, input.device_id);
  const now = clock.now();
  let commandId = newId('cmd', now);
  let replayed = false;
  if (input.idempotency_key !== undefined) {
    const use: KeyUse = {
      customer_id: input.customer_id,
      key_sha256: sha256(input.idempotency_key),
      request_sha256: requestDigest(input),
      command_id: commandId,
      device_id: input.device_id,
      used_at: now,
    };
    let earlier: KeyUse | null = null;
    await handle(store, {
      stream: streams.commandKey(input.customer_id, use.key_sha256.slice(0, 32)),
      aggregate: commandKeyStream,
      decide(state) {
        const events = decideKeyUse(state, use, now);
        earlier = events.length === 0 ? state : null;
        return events;
      },
    });
    if (earlier) {
      commandId = (earlier as KeyUse).command_id;
      replayed = true;
    }
  }
  // Queued even on a replay: the earlier request may have died between its claim and its command (decideQueue keeps one).
  const position = await queueCommand(store, newCommand(input, device, commandId, now));
  return { command_id: commandId, position, replayed };
}
