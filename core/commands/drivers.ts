/** Driver commands: create a driver (its `external_id` unique inside the customer) and the existence check other commands share. */
import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { DriverCreated } from '../events.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { newId } from '../ids.js';
import { streams } from '../streams.js';
import { takeClaim } from './claims.js';
import { type Aggregate, type NewEvent, handle, load } from './handler.js';
import { CommandRejected } from './rejection.js';

/** A driver stream holds its creation only. */
export type DriverState = DriverCreated['data'] | null;

export const driverStream: Aggregate<DriverState> = {
  initial: null,
  evolve: (state, event) => (event.type === 'DriverCreated' ? event.data : state),
  reads: 'first',
};

/** Another customer's driver is as unknown as a made-up id; `field` names the input that carried it. */
export function checkDriver(state: DriverState, customerId: string, driverId: string, field: string): void {
  if (state?.customer_id !== customerId) throw new CommandRejected('invalid', 'validation_failed', `driver ${driverId} does not exist`, field);
}

/** Refuses a driver id that does not exist for this customer. */
export async function requireDriver(store: EventStore, customerId: string, driverId: string, field: string): Promise<void> {
  checkDriver((await load(store, streams.driver(driverId), driverStream)).state, customerId, driverId, field);
}

export interface CreateDriverInput {
  customer_id: string;
  name: string;
  external_id?: string | null;
}

export function decideCreateDriver(state: DriverState, command: Omit<DriverCreated['data'], 'created_at'>, now: number): NewEvent[] {
  if (state) throw new CommandRejected('conflict', 'already_exists', `driver ${command.driver_id} already exists`);
  return [{ type: 'DriverCreated', data: { ...command, created_at: now } }];
}

/** The claim stream of an external id: keyed by a digest, the id being free text. */
export function externalIdStream(customerId: string, externalId: string): string {
  return streams.driverExternalId(customerId, createHash('sha256').update(externalId).digest('hex').slice(0, 32));
}

export async function createDriver(store: EventStore, clock: Clock, input: CreateDriverInput): Promise<{ driver_id: string; position: LogPosition }> {
  const now = clock.now();
  const driverId = newId('drv', now);
  const externalId = input.external_id ?? null;
  if (externalId !== null) {
    const claim = await takeClaim(store, clock, {
      stream: externalIdStream(input.customer_id, externalId),
      event: { type: 'DriverExternalIdClaimed', data: { customer_id: input.customer_id, driver_id: driverId, external_id: externalId, claimed_at: now } },
    });
    if (!claim) {
      throw new CommandRejected('conflict', 'external_id_taken', `A driver with external_id ${JSON.stringify(externalId)} already exists.`, '/external_id');
    }
  }
  const command = { driver_id: driverId, customer_id: input.customer_id, name: input.name, external_id: externalId };
  const { position } = await handle(store, { stream: streams.driver(driverId), aggregate: driverStream, decide: (state) => decideCreateDriver(state, command, now) });
  return { driver_id: driverId, position: position! };
}
