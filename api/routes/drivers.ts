/** Drivers: create, list and read (with current score and vehicle), daily score history. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { createDriver } from '../../core/commands/drivers.js';
import { addDays, dayOf, daysBetween } from '../../projections/driver-scores/days.js';
import { scoreOf } from '../../projections/driver-scores/score.js';
import type { ApiContext } from '../context.js';
import { ListCursor, idKey } from '../pagination.js';
import { authOf } from '../plugins/auth.js';
import { ApiError, notFound } from '../problem.js';
import { currentTotals, dailyTotals } from '../queries/driver-scores.js';
import { currentVehicles, driverById, driverPage, type DriverRow } from '../queries/drivers.js';
import {
  CreateDriverBody,
  Driver,
  DriverList,
  DriverParams,
  DriverScoreHistory,
  ListDriversQuery,
  ScoreQuery,
  driverBody,
} from '../schemas/drivers.js';
import { problemResponse } from '../schemas/error-responses.js';

const cursors = new ListCursor('drivers', idKey);

/** Longest score history one request may ask for. */
export const MAX_SCORE_DAYS = 92;
const DEFAULT_SCORE_DAYS = 7;

export async function driversRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const db = ctx.readModelDb;

  /** List items: one query each for vehicles and scores of the whole page. */
  const items = (customerId: string, rows: DriverRow[]) => {
    const ids = rows.map((d) => d.driver_id);
    const vehicles = currentVehicles(db, customerId, ids);
    const totals = currentTotals(db, customerId, ids);
    return rows.map((d) => {
      const t = totals.get(d.driver_id);
      return driverBody(d, t ? scoreOf(t) : null, vehicles.get(d.driver_id) ?? null);
    });
  };

  r.post(
    '/v1/drivers',
    {
      config: { scope: 'drivers:write' },
      schema: {
        tags: ['Drivers'],
        summary: 'Create a driver',
        operationId: 'createDriver',
        body: CreateDriverBody,
        response: { 201: Driver, 409: problemResponse('Another driver of yours has this external_id (`external_id_taken`)') },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const body = request.body;
      const { driver_id: id, position } = await createDriver(ctx.store, ctx.clock, { customer_id: auth.customerId, name: body.name, external_id: body.external_id });
      await ctx.waitFor(position);
      const row = driverById(db, auth.customerId, id);
      if (!row) throw new Error(`driver ${id} missing from read model after creation`);
      return reply.status(201).header('Location', `/v1/drivers/${id}`).send(items(auth.customerId, [row])[0]!);
    },
  );

  r.get(
    '/v1/drivers',
    {
      config: { scope: 'drivers:read' },
      schema: { tags: ['Drivers'], summary: 'List drivers with their current score and vehicle', operationId: 'listDrivers', querystring: ListDriversQuery, response: { 200: DriverList } },
    },
    async (request) => {
      const auth = authOf(request);
      const q = request.query;
      const cursor = cursors.for({});
      const rows = driverPage(db, auth.customerId, cursor.decode(q.cursor), q.limit + 1);
      const result = cursor.page(rows, q.limit, (d) => d.driver_id);
      return { data: items(auth.customerId, result.data), pagination: result.pagination };
    },
  );

  r.get(
    '/v1/drivers/:id',
    {
      config: { scope: 'drivers:read' },
      schema: { tags: ['Drivers'], summary: 'Get a driver with the current score and vehicle', operationId: 'getDriver', params: DriverParams, response: { 200: Driver } },
    },
    async (request) => {
      const auth = authOf(request);
      const row = driverById(db, auth.customerId, request.params.id);
      if (!row) throw notFound('driver', request.params.id);
      return items(auth.customerId, [row])[0]!;
    },
  );

  r.get(
    '/v1/drivers/:id/score',
    {
      config: { scope: 'drivers:read' },
      schema: {
        tags: ['Drivers'],
        summary: "Get a driver's score per day",
        operationId: 'getDriverScore',
        params: DriverParams,
        querystring: ScoreQuery,
        response: { 200: DriverScoreHistory },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const q = request.query;
      // The schema's `date` format has refused anything but a real YYYY-MM-DD day.
      const to = q.to ?? addDays(dayOf(ctx.clock.now()), 1);
      const from = q.from ?? addDays(to, -DEFAULT_SCORE_DAYS);
      if (to <= from) {
        throw new ApiError(400, 'validation_failed', 'to must be after from (to is exclusive)', [
          { pointer: '/query/to', message: 'must be after from' },
        ]);
      }
      if (from < addDays(to, -MAX_SCORE_DAYS)) {
        throw new ApiError(400, 'range_too_large', `from..to may span at most ${MAX_SCORE_DAYS} days.`, [
          { pointer: '/query/from', message: `more than ${MAX_SCORE_DAYS} days before to` },
        ]);
      }
      const driver = driverById(db, auth.customerId, request.params.id);
      if (!driver) throw notFound('driver', request.params.id);
      const totals = dailyTotals(db, driver.driver_id, from, to);
      const empty = { distance_m: 0, driving_ms: 0, overspeed_ms: 0, counts: {} };
      return {
        driver_id: driver.driver_id,
        from,
        to,
        data: daysBetween(from, to).map((date) => ({ date, ...scoreOf(totals.get(date) ?? empty) })),
      };
    },
  );
}
