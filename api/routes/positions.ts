/** Positions: the latest of every device. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ApiContext } from '../context.js';
import { authOf } from '../plugins/auth.js';
import { Problem, iso } from '../schemas/common.js';
import { LatestPositionList, LatestPositionsQuery } from '../schemas/positions.js';

export async function positionRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.get(
    '/v1/positions/latest',
    {
      config: { scope: 'positions:read' },
      schema: { querystring: LatestPositionsQuery, response: { 200: LatestPositionList, 400: Problem, 401: Problem, 403: Problem } },
    },
    async (request) => {
      const auth = authOf(request);
      const deviceIds = request.query.device_id ? request.query.device_id.split(',').filter(Boolean) : null;
      const rows = ctx.readModels.latestPositions(auth.customerId, {
        deviceIds,
        groupId: request.query.group_id ?? null,
      });
      return {
        data: rows.map((p) => ({
          device_id: p.device_id,
          device_name: p.device_name,
          lat: p.lat,
          lng: p.lng,
          speed_kmh: p.speed_kmh,
          heading_deg: p.heading_deg,
          altitude_m: p.altitude_m,
          satellites: p.satellites,
          timestamp: iso(p.fix_time),
          received_at: iso(p.received_at),
          ignition: p.ignition === null ? null : p.ignition === 1,
        })),
      };
    },
  );
}
