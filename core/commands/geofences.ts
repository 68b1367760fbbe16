/** Geofence commands: create one from a checked shape, delete it (no exit events follow). */
import type { Clock } from '../clock.js';
import type { GeofenceCreated } from '../events.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { newId } from '../ids.js';
import { streams } from '../streams.js';
import { type Aggregate, type NewEvent, handle } from './handler.js';
import { CommandRejected } from './rejection.js';

/** What a geofence is, once its input was checked (closed ring, vertex limit, circle turned into a polygon). */
export type GeofenceShape = Pick<GeofenceCreated['data'], 'shape' | 'geometry' | 'center' | 'radius_m'>;

export type GeofenceState = { customer_id: string; deleted: boolean } | null;

export const geofenceStream: Aggregate<GeofenceState> = {
  initial: null,
  evolve(state, event) {
    if (event.type === 'GeofenceCreated') return { customer_id: event.data.customer_id, deleted: false };
    if (event.type === 'GeofenceDeleted' && state) return { ...state, deleted: true };
    return state;
  },
};

export function decideCreateGeofence(state: GeofenceState, created: GeofenceCreated['data']): NewEvent[] {
  if (state) throw new CommandRejected('conflict', 'already_exists', `geofence ${created.geofence_id} already exists`);
  return [{ type: 'GeofenceCreated', data: created }];
}

/** A deleted, unknown or another tenant's geofence is not found (a second delete too). */
export function decideDeleteGeofence(state: GeofenceState, command: { customer_id: string; geofence_id: string }, now: number): NewEvent[] {
  if (state?.customer_id !== command.customer_id || state.deleted) {
    throw new CommandRejected('not_found', 'not_found', `geofence ${command.geofence_id} does not exist`);
  }
  return [{ type: 'GeofenceDeleted', data: { geofence_id: command.geofence_id, customer_id: command.customer_id, deleted_at: now } }];
}

export async function createGeofence(
  store: EventStore,
  clock: Clock,
  input: { customer_id: string; name: string; shape: GeofenceShape },
): Promise<{ geofence_id: string; position: LogPosition }> {
  const now = clock.now();
  const id = newId('geo', now);
  const created: GeofenceCreated['data'] = { geofence_id: id, customer_id: input.customer_id, name: input.name, ...input.shape, created_at: now };
  const { position } = await handle(store, { stream: streams.geofence(id), aggregate: geofenceStream, decide: (state) => decideCreateGeofence(state, created) });
  return { geofence_id: id, position: position! };
}

export async function deleteGeofence(store: EventStore, clock: Clock, input: { customer_id: string; geofence_id: string }): Promise<LogPosition> {
  const now = clock.now();
  const { position } = await handle(store, {
    stream: streams.geofence(input.geofence_id),
    aggregate: geofenceStream,
    decide: (state) => decideDeleteGeofence(state, input, now),
  });
  return position!;
}
