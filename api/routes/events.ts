/** Events: the filtered list, one event with its context, and the feed in commit order. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ApiContext } from '../context.js';
import { commaList, parseKindList } from '../list-filters.js';
import { authOf } from '../plugins/auth.js';
import { ListCursor, sequenceKey, timeAndIdKey } from '../pagination.js';
import { notFound } from '../problem.js';
import { eventById, eventPage, feedPage, type EventRow } from '../queries/events.js';
import {
  EventDetail,
  EventIdParams,
  EventList,
  FeedList,
  FeedQuery,
  ListEventsQuery,
  RAISED_KINDS,
  eventDetail,
  eventItem,
  feedItem,
} from '../schemas/events.js';
import { parseWindow } from '../time.js';
import { EVENT_COLUMNS } from '../exports/events.js';
import { csvChunks } from '../exports/formats.js';
import { pages, sendExport } from '../exports/stream.js';
import type { FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';

/** Events a CSV export reads at a time. */
const EXPORT_PAGE = 1000;

const eventCursors = new ListCursor('events', timeAndIdKey);
const feedCursors = new ListCursor('feed', sequenceKey);

export async function eventsRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const db = ctx.readModelDb;

  r.get(
    '/v1/events',
    {
      config: { scope: 'events:read' },
      schema: { tags: ['Events'], summary: 'List events, newest first', operationId: 'listEvents', querystring: ListEventsQuery, response: {
          200: {
            description: 'A page of events; with format=csv, every event of the filters as a CSV file',
            content: { 'application/json': { schema: EventList }, 'text/csv': { schema: Type.String() } },
          },
        },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const q = request.query;
      const { from, to } = parseWindow(q);
      const filters = {
        device_id: commaList(q.device_id),
        driver_id: commaList(q.driver_id),
        kind: parseKindList(q.kind, RAISED_KINDS, '/query/kind'),
        severity: commaList(q.severity),
        from,
        to,
        order: q.order,
      };
      const query = { deviceIds: filters.device_id, driverIds: filters.driver_id, kinds: filters.kind, severities: filters.severity, from, to, order: q.order };
      if (q.format === 'csv') {
        const walk = pages<{ t: number; id: string }, EventRow>((after) => {
          const rows = eventPage(db, auth.customerId, { ...query, after, limit: EXPORT_PAGE });
          const last = rows.at(-1);
          return { rows, next: rows.length === EXPORT_PAGE && last ? { t: last.occurred_at, id: last.event_id } : null };
        });
        return sendExport(reply as FastifyReply, { contentType: 'text/csv; charset=utf-8', filename: 'events.csv' }, csvChunks(EVENT_COLUMNS, walk));
      }
      const cursor = eventCursors.for(filters);
      const after = cursor.decode(q.cursor);
      const rows = eventPage(db, auth.customerId, { ...query, after, limit: q.limit + 1 });
      const result = cursor.page(rows, q.limit, (e) => ({ t: e.occurred_at, id: e.event_id }));
      return { data: result.data.map(eventItem), pagination: result.pagination };
    },
  );

  r.get(
    '/v1/events/:id',
    {
      config: { scope: 'events:read' },
      schema: { tags: ['Events'], summary: 'Get an event with its context and media', operationId: 'getEvent', params: EventIdParams, response: { 200: EventDetail } },
    },
    async (request) => {
      const auth = authOf(request);
      const row = eventById(db, auth.customerId, request.params.id);
      if (!row) throw notFound('event', request.params.id);
      return eventDetail(row);
    },
  );

  r.get(
    '/v1/feed',
    {
      config: { scope: 'events:read' },
      schema: { tags: ['Events'], summary: 'List every event in commit order (the feed)', operationId: 'listFeed', querystring: FeedQuery, response: { 200: FeedList } },
    },
    async (request) => {
      const auth = authOf(request);
      const q = request.query;
      const cursor = feedCursors.for({});
      const afterSeq = cursor.decode(q.cursor) ?? 0;
      const rows = feedPage(db, auth.customerId, afterSeq, q.limit + 1);
      const hasMore = rows.length > q.limit;
      const data = hasMore ? rows.slice(0, q.limit) : rows;
      // A feed is polled: the cursor is never null, so a caught-up client keeps its place for the next poll.
      const last = data.length > 0 ? data[data.length - 1]!.seq : afterSeq;
      return { data: data.map(feedItem), pagination: { next_cursor: cursor.encode(last), has_more: hasMore } };
    },
  );
}
