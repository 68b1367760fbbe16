/** Driver commands: create a driver (its `external_id` unique inside the customer) and the existence check other commands share. */
import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { EventStore, LogPosition, RecordedEvent } from '../event-store/port.js';
import { newId, randomUuid } from '../ids.js';
import { streams } from '../streams.js';
import { takeClaim } from './claims.js';
import { CommandRejected } from './rejection.js';

/**
 * Refuses a driver id that does not exist for this customer (another
 * customer's driver is as unknown as a made-up id). `field` names the input
 * that carried it.
 */
export async function requireDriver(store: EventStore, customerId: string, driverId: string, field: string): Promise<void> {
  const [created] = await store.readStream(streams.driver(driverId), { maxCount: 1 });
  if (created?.type === 'DriverCreated' && created.data.customer_id === customerId) return;
  throw new CommandRejected('invalid', 'validation_failed', `driver ${driverId} does not exist`, field);
}

export interface CreateDriverInput {
  customer_id: string;
  name: string;
  external_id?: string | null;
}

export async function createDriver(store: EventStore, clock: Clock, input: CreateDriverInput): Promise<{ driver_id: string; position: LogPosition }> {
  const now = clock.now();
  const driverId = newId('drv', now);
  const externalId = input.external_id ?? null;
  if (externalId !== null) {
    const claim = await takeClaim(store, clock, {
      stream: streams.driverExternalId(input.customer_id, createHash('sha256').update(externalId).digest('hex').slice(0, 32)),
      event: {
        id: randomUuid(),
        type: 'DriverExternalIdClaimed',
        data: { customer_id: input.customer_id, driver_id: driverId, external_id: externalId, claimed_at: now },
      },
      ownerOf: externalIdOwner,
    });
    if (!claim) {
      throw new CommandRejected('conflict', 'external_id_taken', `A driver with external_id ${JSON.stringify(externalId)} already exists.`, '/external_id');
    }
  }
  const result = await store.appendToStream(
    streams.driver(driverId),
    [{ id: randomUuid(), type: 'DriverCreated', data: { driver_id: driverId, customer_id: input.customer_id, name: input.name, external_id: externalId, created_at: now } }],
    { expectedRevision: 'no_stream' },
  );
  return { driver_id: driverId, position: result.position };
}

function externalIdOwner(event: RecordedEvent): { ownerStream: string; claimedAt: number } | null {
  if (event.type !== 'DriverExternalIdClaimed') return null;
  return { ownerStream: streams.driver(event.data.driver_id), claimedAt: event.data.claimed_at };
}
