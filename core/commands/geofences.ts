/** Geofence commands: create one from a checked shape, set its dwell threshold, delete it (no exit events follow). */
import type { Clock } from '../clock.js';
import type { GeofenceCreated } from '../events.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { newId } from '../ids.js';
import { streams } from '../streams.js';
import { type Aggregate, type NewEvent, handle } from './handler.js';
import { CommandRejected } from './rejection.js';

/** What a geofence is, once its input was checked (closed ring, vertex limit, circle turned into a polygon). */
export type GeofenceShape = Pick<GeofenceCreated['data'], 'shape' | 'geometry' | 'center' | 'radius_m'>;

export type GeofenceState = { customer_id: string; deleted: boolean; dwell_s: number | null } | null;

export const geofenceStream: Aggregate<GeofenceState> = {
  initial: null,
  evolve(state, event) {
    if (event.type === 'GeofenceCreated') return { customer_id: event.data.customer_id, deleted: false, dwell_s: event.data.dwell_s ?? null };
    if (event.type === 'GeofenceUpdated' && state) return { ...state, dwell_s: event.data.dwell_s };
    if (event.type === 'GeofenceDeleted' && state) return { ...state, deleted: true };
    return state;
  },
};

export function decideCreateGeofence(state: GeofenceState, created: GeofenceCreated['data']): NewEvent[] {
  if (state) throw new CommandRejected('conflict', 'already_exists', `geofence ${created.geofence_id} already exists`);
  return [{ type: 'GeofenceCreated', data: created }];
}

function mustExist(state: GeofenceState, command: { customer_id: string; geofence_id: string }): asserts state is NonNullable<GeofenceState> {
  if (state?.customer_id !== command.customer_id || state.deleted) {
    throw new CommandRejected('not_found', 'not_found', `geofence ${command.geofence_id} does not exist`);
  }
}

/** Sets or clears (null) the dwell threshold; the same value again appends nothing. Not found as for a delete. */
export function decideUpdateGeofence(
  state: GeofenceState,
  command: { customer_id: string; geofence_id: string; dwell_s?: number | null },
  now: number,
): NewEvent[] {
  mustExist(state, command);
  if (command.dwell_s === undefined || command.dwell_s === state.dwell_s) return [];
  return [{ type: 'GeofenceUpdated', data: { geofence_id: command.geofence_id, customer_id: command.customer_id, dwell_s: command.dwell_s, updated_at: now } }];
}

/** A deleted, unknown or another tenant's geofence is not found (a second delete too). */
export function decideDeleteGeofence(state: GeofenceState, command: { customer_id: string; geofence_id: string }, now: number): NewEvent[] {
  mustExist(state, command);
  return [{ type: 'GeofenceDeleted', data: { geofence_id: command.geofence_id, customer_id: command.customer_id, deleted_at: now } }];
}

export async function createGeofence(
  store: EventStore,
  clock: Clock,
  input: { customer_id: string; name: string; shape: GeofenceShape; dwell_s?: number | null },
): Promise<{ geofence_id: string; position: LogPosition }> {
  const now = clock.now();
  const id = newId('geo', now);
  const created: GeofenceCreated['data'] = {
    geofence_id: id, customer_id: input.customer_id, name: input.name, ...input.shape, dwell_s: input.dwell_s ?? null, created_at: now,
  };
  const { position } = await handle(store, { stream: streams.geofence(id), aggregate: geofenceStream, decide: (state) => decideCreateGeofence(state, created) });
  return { geofence_id: id, position: position! };
}

/** Resolves with the log position of the change, or null when nothing changed. */
export async function updateGeofence(
  store: EventStore,
  clock: Clock,
  input: { customer_id: string; geofence_id: string; dwell_s?: number | null },
): Promise<LogPosition | null> {
  const now = clock.now();
  const { position } = await handle(store, {
    stream: streams.geofence(input.geofence_id),
    aggregate: geofenceStream,
    decide: (state) => decideUpdateGeofence(state, input, now),
  });
  return position ?? null;
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
