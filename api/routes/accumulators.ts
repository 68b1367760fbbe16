/** A device's odometer and engine hours: read, and set to what its dashboard shows (docs/trips.md, Accumulators). */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { setAccumulators } from '../../core/commands/reports.js';
import type { ApiContext } from '../context.js';
import { authOf } from '../plugins/auth.js';
import { notFound } from '../problem.js';
import { accumulatorsOf } from '../queries/trips.js';
import { Accumulators, AccumulatorsBody, accumulatorsItem } from '../schemas/trips.js';

const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export async function accumulatorsRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const db = ctx.readModelDb;

  const read = (customerId: string, deviceId: string) => {
    const a = accumulatorsOf(db, customerId, deviceId);
    if (!a) throw notFound('device', deviceId);
    return accumulatorsItem(deviceId, a);
  };

  r.get(
    '/v1/devices/:id/accumulators',
    {
      config: { scope: 'devices:read' },
      schema: { tags: ['Devices'], summary: "Get a device's odometer and engine hours", operationId: 'getAccumulators', params: Params, response: { 200: Accumulators } },
    },
    async (request) => read(authOf(request).customerId, request.params.id),
  );

  r.put(
    '/v1/devices/:id/accumulators',
    {
      config: { scope: 'devices:write' },
      schema: {
        tags: ['Devices'],
        summary: "Set a device's odometer or engine hours to its dashboard's",
        description: 'The values continue from what is set: the difference to what the platform computed is kept and added from then on.',
        operationId: 'setAccumulators',
        params: Params,
        body: AccumulatorsBody,
        response: { 200: Accumulators },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const position = await setAccumulators(ctx.store, ctx.clock, { customer_id: auth.customerId, device_id: request.params.id, ...request.body });
      await ctx.waitFor(position);
      return read(auth.customerId, request.params.id);
    },
  );
}
