/** Geofences: create (polygon or circle), list, read, delete. */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { WrongExpectedRevisionError } from '../../core/event-store/port.js';
import { newId, randomUuid } from '../../core/ids.js';
import { streams } from '../../core/streams.js';
import type { ApiContext } from '../context.js';
import { geofenceShape } from '../geofence-input.js';
import { ListCursor, idKey } from '../pagination.js';
import { authOf } from '../plugins/auth.js';
import { ApiError, notFound } from '../problem.js';
import { geofenceById, geofencePage } from '../queries/geofences.js';
import { CreateGeofenceBody, Geofence, GeofenceList, GeofenceParams, ListGeofencesQuery, geofenceBody } from '../schemas/geofences.js';

const cursors = new ListCursor('geofences', idKey);

export async function geofencesRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const db = ctx.readModels.db;

  r.post(
    '/v1/geofences',
    {
      config: { scope: 'geofences:write' },
      schema: { tags: ['Geofences'], summary: 'Create a geofence (polygon or circle)', operationId: 'createGeofence', body: CreateGeofenceBody, response: { 201: Geofence } },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const parsed = geofenceShape(request.body);
      if ('errors' in parsed) {
        throw new ApiError(400, 'validation_failed', parsed.errors.map((e) => `${e.pointer}: ${e.message}`).join('; '), parsed.errors);
      }
      const now = ctx.clock.now();
      const id = newId('geo', now);
      const result = await ctx.store.appendToStream(
        streams.geofence(id),
        [
          {
            id: randomUuid(),
            type: 'GeofenceCreated',
            data: { geofence_id: id, customer_id: auth.customerId, name: request.body.name, ...parsed.shape, created_at: now },
          },
        ],
        { expectedRevision: 'no_stream' },
      );
      await ctx.waitFor(result.position);
      const row = geofenceById(db, auth.customerId, id);
      if (!row) throw new Error(`geofence ${id} missing from read model after creation`);
      return reply.status(201).header('Location', `/v1/geofences/${id}`).send(geofenceBody(row));
    },
  );

  r.get(
    '/v1/geofences',
    {
      config: { scope: 'geofences:read' },
      schema: { tags: ['Geofences'], summary: 'List geofences', operationId: 'listGeofences', querystring: ListGeofencesQuery, response: { 200: GeofenceList } },
    },
    async (request) => {
      const auth = authOf(request);
      const q = request.query;
      const filters = {};
      const rows = geofencePage(db, auth.customerId, cursors.decode(q.cursor, filters), q.limit + 1);
      const result = cursors.page(rows, q.limit, (g) => g.geofence_id, filters);
      return { data: result.data.map(geofenceBody), pagination: result.pagination };
    },
  );

  r.get(
    '/v1/geofences/:id',
    {
      config: { scope: 'geofences:read' },
      schema: { tags: ['Geofences'], summary: 'Get a geofence', operationId: 'getGeofence', params: GeofenceParams, response: { 200: Geofence } },
    },
    async (request) => {
      const auth = authOf(request);
      const row = geofenceById(db, auth.customerId, request.params.id);
      if (!row) throw notFound('geofence', request.params.id);
      return geofenceBody(row);
    },
  );

  r.delete(
    '/v1/geofences/:id',
    {
      config: { scope: 'geofences:write' },
      schema: {
        tags: ['Geofences'],
        summary: 'Delete a geofence (no exit events follow)',
        operationId: 'deleteGeofence',
        params: GeofenceParams,
        response: { 204: Type.Null({ description: 'Deleted; the id answers 404 from now on' }) },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const id = request.params.id;
      if (!geofenceById(db, auth.customerId, id)) throw notFound('geofence', id);
      try {
        // Revision 0 is the creation: a second delete racing this one fails here and answers 404.
        const result = await ctx.store.appendToStream(
          streams.geofence(id),
          [{ id: randomUuid(), type: 'GeofenceDeleted', data: { geofence_id: id, customer_id: auth.customerId, deleted_at: ctx.clock.now() } }],
          { expectedRevision: 0n },
        );
        await ctx.waitFor(result.position);
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError) throw notFound('geofence', id);
        throw err;
      }
      return reply.status(204).send(null);
    },
  );
}
