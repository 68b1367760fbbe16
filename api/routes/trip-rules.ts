/** The customer's trip, stop and idle rules (docs/trips.md, Rules): read, and replaced whole. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { setTripRules } from '../../core/commands/reports.js';
import { DEFAULT_TRIP_RULES, type TripRules as Rules } from '../../core/trip-rules.js';
import type { ApiContext } from '../context.js';
import { authOf } from '../plugins/auth.js';
import { storedTripRules } from '../queries/trips.js';
import { TripRules, TripRulesBody } from '../schemas/trips.js';

export async function tripRulesRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const current = (customerId: string): Rules => {
    const stored = storedTripRules(ctx.readModelDb, customerId);
    return stored ? (JSON.parse(stored) as Rules) : { ...DEFAULT_TRIP_RULES };
  };

  r.get(
    '/v1/settings/trips',
    {
      config: { scope: 'devices:read' },
      schema: { tags: ['Reports'], summary: 'Get the trip, stop and idle rules', operationId: 'getTripRules', response: { 200: TripRules } },
    },
    async (request) => current(authOf(request).customerId),
  );

  r.put(
    '/v1/settings/trips',
    {
      config: { scope: 'devices:write' },
      schema: {
        tags: ['Reports'],
        summary: 'Set the trip, stop and idle rules',
        description: 'Fields left out take their defaults. The rules cut what the devices report from then on; trips already cut stay as they are.',
        operationId: 'setTripRules',
        body: TripRulesBody,
        response: { 200: TripRules },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const position = await setTripRules(ctx.store, ctx.clock, { customer_id: auth.customerId, rules: request.body });
      await ctx.waitFor(position);
      return current(auth.customerId);
    },
  );
}
