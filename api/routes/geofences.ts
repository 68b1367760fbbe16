/** Geofences: create (polygon or circle), list, read, set the dwell threshold, delete. */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { createGeofence, deleteGeofence, updateGeofence } from '../../core/commands/geofences.js';
import type { ApiContext } from '../context.js';
import { geofenceShape } from '../geofence-input.js';
import { ListCursor, idKey } from '../pagination.js';
import { authOf } from '../plugins/auth.js';
import { ApiError, notFound } from '../problem.js';
import { geofenceById, geofencePage } from '../queries/geofences.js';
import { CreateGeofenceBody, Geofence, GeofenceList, GeofenceParams, ListGeofencesQuery, UpdateGeofenceBody, geofenceBody } from '../schemas/geofences.js';

const cursors = new ListCursor('geofences', idKey);

export async function geofencesRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const db = ctx.readModelDb;

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
      const { geofence_id: id, position } = await createGeofence(ctx.store, ctx.clock, {
        customer_id: auth.customerId, name: request.body.name, shape: parsed.shape, dwell_s: request.body.dwell_s ?? null,
      });
      await ctx.waitFor(position);
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
      const cursor = cursors.for({});
      const rows = geofencePage(db, auth.customerId, cursor.decode(q.cursor), q.limit + 1);
      const result = cursor.page(rows, q.limit, (g) => g.geofence_id);
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

  r.patch(
    '/v1/geofences/:id',
    {
      config: { scope: 'geofences:write' },
      schema: {
        tags: ['Geofences'],
        summary: 'Set or clear a geofence\'s dwell threshold',
        operationId: 'updateGeofence',
        params: GeofenceParams,
        body: UpdateGeofenceBody,
        response: { 200: Geofence },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const position = await updateGeofence(ctx.store, ctx.clock, { customer_id: auth.customerId, geofence_id: request.params.id, ...request.body });
      if (position) await ctx.waitFor(position);
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
      await ctx.waitFor(await deleteGeofence(ctx.store, ctx.clock, { customer_id: auth.customerId, geofence_id: request.params.id }));
      return reply.status(204).send(null);
    },
  );
}
