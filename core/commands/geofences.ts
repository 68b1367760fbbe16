/** Geofence commands: create one from a checked shape, delete it (no exit events follow). */
import type { Clock } from '../clock.js';
import type { GeofenceCreated } from '../events.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { WrongExpectedRevisionError } from '../event-store/port.js';
import { newId, randomUuid } from '../ids.js';
import { streams } from '../streams.js';
import { CommandRejected } from './rejection.js';

/** What a geofence is, once its input was checked (closed ring, vertex limit, circle turned into a polygon). */
export type GeofenceShape = Pick<GeofenceCreated['data'], 'shape' | 'geometry' | 'center' | 'radius_m'>;

export async function createGeofence(
  store: EventStore,
  clock: Clock,
  input: { customer_id: string; name: string; shape: GeofenceShape },
): Promise<{ geofence_id: string; position: LogPosition }> {
  const now = clock.now();
  const id = newId('geo', now);
  const result = await store.appendToStream(
    streams.geofence(id),
    [{ id: randomUuid(), type: 'GeofenceCreated', data: { geofence_id: id, customer_id: input.customer_id, name: input.name, ...input.shape, created_at: now } }],
    { expectedRevision: 'no_stream' },
  );
  return { geofence_id: id, position: result.position };
}

/** Deletes a geofence of this customer; a deleted, unknown or another tenant's geofence is not found. */
export async function deleteGeofence(store: EventStore, clock: Clock, input: { customer_id: string; geofence_id: string }): Promise<LogPosition> {
  const stream = streams.geofence(input.geofence_id);
  const [created] = await store.readStream(stream, { maxCount: 1 });
  if (created?.type !== 'GeofenceCreated' || created.data.customer_id !== input.customer_id) {
    throw new CommandRejected('not_found', 'not_found', `geofence ${input.geofence_id} does not exist`);
  }
  try {
    // Revision 0 is the creation: a second delete racing this one fails here and is not found.
    const result = await store.appendToStream(
      stream,
      [{ id: randomUuid(), type: 'GeofenceDeleted', data: { geofence_id: input.geofence_id, customer_id: input.customer_id, deleted_at: clock.now() } }],
      { expectedRevision: 0n },
    );
    return result.position;
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) throw new CommandRejected('not_found', 'not_found', `geofence ${input.geofence_id} does not exist`);
    throw err;
  }
}
