/** Liveness for load balancers and orchestrators: the process answers; nothing else is checked. */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Liveness',
        operationId: 'getLiveness',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
}
