/**
 * Readiness and metrics. /readyz fails (503) when the store does not answer,
 * cannot write (a full disk: devices would get no acks; `ctx.storeWrites`), or
 * the read models are further behind the log than `readyMaxLagS`, so a
 * balancer stops sending devices and reads to a node that cannot serve them. /metrics is the
 * Prometheus text format; like /healthz it is public: keep it off the
 * internet at the balancer.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { settingsOf, type ApiContext } from '../context.js';
import type { ApiMetrics } from '../metrics.js';
import { ApiError } from '../problem.js';
import { Problem } from '../schemas/common.js';
import { Readiness } from '../schemas/ops.js';

export async function opsRoutes(app: FastifyInstance, ctx: ApiContext, metrics: ApiMetrics): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const maxLagS = settingsOf(ctx).readyMaxLagS;

  r.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Readiness: store reachable and read models caught up',
        operationId: 'getReadiness',
        response: { 200: Readiness, 503: Problem },
      },
    },
    async () => {
      const writes = ctx.storeWrites?.();
      if (writes && !writes.writable) {
        const forS = writes.since === null ? '' : ` for ${Math.max(0, (ctx.clock.now() - writes.since) / 1000).toFixed(1)} s`;
        throw new ApiError(
          503,
          'not_ready',
          `The event store cannot write (${writes.code ?? 'unknown'})${forS}: appends fail and devices get no acks. Ready again once a write succeeds.`,
          [{ pointer: '/checks/store', message: 'not_writable' }],
        );
      }
      let lag;
      try {
        lag = await ctx.projections.lag();
      } catch (err) {
        throw new ApiError(503, 'not_ready', `The event store does not answer: ${(err as Error).message}`, [
          { pointer: '/checks/store', message: 'unreachable' },
        ]);
      }
      if (lag.seconds > maxLagS) {
        throw new ApiError(
          503,
          'not_ready',
          `The read models are ${lag.seconds.toFixed(1)} s behind the log (${lag.capped ? 'at least ' : ''}${lag.events} events); the bound is ${maxLagS} s.`,
          [{ pointer: '/checks/projections', message: 'lagging' }],
        );
      }
      return {
        status: 'ready' as const,
        checks: {
          store: 'ok' as const,
          projections: { lag_events: lag.events, lag_seconds: lag.seconds, max_lag_seconds: maxLagS },
        },
      };
    },
  );

  r.get(
    '/metrics',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Prometheus metrics',
        operationId: 'getMetrics',
        produces: ['text/plain'],
        response: { 200: Type.String({ description: 'Prometheus text exposition format 0.0.4' }) },
      },
    },
    async (_request, reply) => {
      const body = await metrics.render();
      return reply.type(metrics.registry.contentType).send(body);
    },
  );
}
