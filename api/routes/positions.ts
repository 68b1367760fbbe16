/** Positions: the latest of every device (paginated by device id) and the history of one. */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ApiContext } from '../context.js';
import { authOf } from '../plugins/auth.js';
import { HistoryList, HistoryQuery, LatestPosition, LatestPositionList, LatestPositionsQuery } from '../schemas/positions.js';
import { LatestPositionsIndex } from '../latest-positions-index.js';
import fastJson from 'fast-json-stringify';
import { HistoryPages } from '../history-pages.js';
import { customerHasDevice } from '../queries/positions.js';
import { problemResponse } from '../schemas/error-responses.js';
import { ListCursor, idKey, timeAndIdKey, withWindowEnd } from '../pagination.js';
import { ApiError, notFound } from '../problem.js';
import { sendList } from '../send-serialized.js';
import { parseTime } from '../time.js';
import { EXPORT_PAGE, positionExport, positionExportFile } from '../exports/positions.js';
import { sendExport } from '../exports/stream.js';
import { Type } from '@sinclair/typebox';

const MAX_WINDOW_MS = 31 * 86_400_000;
/** History pages carry the window end of the walk's first page (`to` defaults to now). */
const latestCursors = new ListCursor('positions-latest', idKey);
const historyCursors = new ListCursor('positions', withWindowEnd(timeAndIdKey));

export async function positionRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { index: latest, stop } = LatestPositionsIndex.follow(ctx.readModelDb, ctx.projections.onApplied, fastJson(LatestPosition));
  const historyPages = new HistoryPages(ctx.historyDbPath);
  app.addHook('onClose', async () => {
    stop();
    await historyPages.close();
  });
  r.get(
    '/v1/positions/latest',
    {
      config: { scope: 'positions:read' },
      schema: { tags: ['Positions'], summary: 'List the latest position of every device', operationId: 'listLatestPositions', querystring: LatestPositionsQuery, response: { 200: LatestPositionList } },
    },
    // Synchronous: the page is in memory, and a promise per request is measurable on the hottest endpoint.
    (request, reply) => {
      const auth = authOf(request);
      const q = request.query;
      const deviceIds = q.device_id ? [...new Set(q.device_id.split(',').filter(Boolean))].sort() : null;
      const filters = { device_id: deviceIds, group_id: q.group_id ?? null };
      const cursor = latestCursors.for(filters);
      const { items, lastId, hasMore } = latest.page(auth.customerId, {
        deviceIds,
        groupId: q.group_id ?? null,
        afterId: cursor.decode(q.cursor),
        limit: q.limit,
      });
      const pagination = { next_cursor: hasMore && lastId ? cursor.encode(lastId) : null, has_more: hasMore };
      // Items arrive serialised by the index (from the same LatestPosition schema); only the envelope is built here.
      sendList(reply as FastifyReply, items, pagination);
    },
  );

  r.get(
    '/v1/positions',
    {
      config: { scope: 'positions:read' },
      schema: { tags: ['Positions'], summary: 'List the position history of a device', operationId: 'listPositions', querystring: HistoryQuery, response: {
          200: {
            description: 'A page of fixes; with format=csv, gpx or kml, every fix of the window as a file',
            content: {
              'application/json': { schema: HistoryList },
              'text/csv': { schema: Type.String() },
              'application/gpx+xml': { schema: Type.String() },
              'application/vnd.google-earth.kml+xml': { schema: Type.String() },
            },
          },
          404: problemResponse("No device with this device_id, or another customer's (`not_found`)"),
        },
      },
    },
    // The page is one SQLite read in the history pages' thread; its items are stored as JSON.
    async (request, reply) => {
      const auth = authOf(request);
      const q = request.query;
      const from = parseTime(q.from, '/query/from');
      const explicitTo = q.to === undefined ? null : parseTime(q.to, '/query/to');
      // Without `to`, the window ends at "now" of the walk's first page: the cursor carries it, so later pages read the same window.
      const filters = { device_id: q.device_id, from, to: explicitTo, order: q.order };
      const walk = historyCursors.for(filters);
      const cursor = walk.decode(q.cursor);
      const to = explicitTo ?? cursor?.end ?? ctx.clock.now();
      if (to <= from) {
        throw new ApiError(400, 'validation_failed', 'to must be after from', [{ pointer: '/query/to', message: 'must be after from' }]);
      }
      if (to - from > MAX_WINDOW_MS) {
        throw new ApiError(400, 'range_too_large', 'The window from..to may span at most 31 days.', [
          { pointer: '/query/to', message: 'more than 31 days after from' },
        ]);
      }
      if (q.format !== 'json') {
        const query = { customerId: auth.customerId, deviceId: q.device_id, from, to, limit: EXPORT_PAGE, order: 'asc' as const };
        const first = await historyPages.read({ ...query, after: null });
        if (first.items === null && !customerHasDevice(ctx.readModelDb, auth.customerId, q.device_id)) throw notFound('device', q.device_id);
        const format = q.format;
        const chunks = positionExport(format, q.device_id, first, (after) => historyPages.read({ ...query, after }));
        return sendExport(reply as FastifyReply, positionExportFile(format, q.device_id, from), chunks);
      }
      const page = await historyPages.read({
        customerId: auth.customerId,
        deviceId: q.device_id,
        from,
        to,
        after: cursor?.key ?? null,
        limit: q.limit,
        order: q.order,
      });
      if (page.items === null && !customerHasDevice(ctx.readModelDb, auth.customerId, q.device_id)) throw notFound('device', q.device_id);
      const pagination = { next_cursor: page.next ? walk.encode({ end: to, key: page.next }) : null, has_more: page.next !== null };
      // The items come joined from the read model, serialised by the HistoryPosition schema (api/history-item.ts).
      return sendList(reply as FastifyReply, page.items ? [page.items] : [], pagination);
    },
  );
}
