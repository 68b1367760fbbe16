/** Events: the filtered list, one event with its context, and the feed in commit order. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ApiContext } from '../context.js';
import { authOf } from '../plugins/auth.js';
import { ListCursor, sequenceKey, timeAndIdKey } from '../pagination.js';
import { ApiError, notFound } from '../problem.js';
import { eventById, eventPage, feedPage } from '../queries/events.js';
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
import { parseTime } from '../time.js';

const eventCursors = new ListCursor('events', timeAndIdKey);
const feedCursors = new ListCursor('feed', sequenceKey);

/** Distinct, sorted: the same filter always hashes to the same cursor. */
function list(raw: string | undefined): string[] | null {
  return raw === undefined ? null : [...new Set(raw.split(',').map((s) => s.trim()).filter(Boolean))].sort();
}

function badKind(part: string): ApiError {
  return new ApiError(400, 'validation_failed', `kind "${part}" is neither a known kind nor a prefix.* of one (e.g. alarm.*).`, [
    { pointer: '/query/kind', message: `unknown kind ${part}` },
  ]);
}

/** Exact kinds and `prefix.*`, expanded to the exact kinds they match. */
export function parseKinds(raw: string | undefined): string[] | null {
  const parts = list(raw);
  if (!parts) return null;
  if (parts.length === 0) throw badKind('');
  const kinds = new Set<string>();
  for (const part of parts) {
    const prefix = part === '*' ? '' : part.endsWith('.*') ? part.slice(0, -1) : null;
    const matched = prefix === null ? RAISED_KINDS.filter((k) => k === part) : RAISED_KINDS.filter((k) => k.startsWith(prefix));
    if (matched.length === 0) throw badKind(part);
    for (const k of matched) kinds.add(k);
  }
  return [...kinds].sort();
}

export async function eventsRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const db = ctx.readModelDb;

  r.get(
    '/v1/events',
    {
      config: { scope: 'events:read' },
      schema: { tags: ['Events'], summary: 'List events, newest first', operationId: 'listEvents', querystring: ListEventsQuery, response: { 200: EventList } },
    },
    async (request) => {
      const auth = authOf(request);
      const q = request.query;
      const from = q.from === undefined ? null : parseTime(q.from, '/query/from');
      const to = q.to === undefined ? null : parseTime(q.to, '/query/to');
      if (from !== null && to !== null && to <= from) {
        throw new ApiError(400, 'validation_failed', 'to must be after from', [{ pointer: '/query/to', message: 'must be after from' }]);
      }
      const filters = {
        device_id: list(q.device_id),
        driver_id: list(q.driver_id),
        kind: parseKinds(q.kind),
        severity: list(q.severity),
        from,
        to,
        order: q.order,
      };
      const cursor = eventCursors.for(filters);
      const after = cursor.decode(q.cursor);
      const rows = eventPage(db, auth.customerId, {
        deviceIds: filters.device_id,
        driverIds: filters.driver_id,
        kinds: filters.kind,
        severities: filters.severity,
        from,
        to,
        order: q.order,
        after,
        limit: q.limit + 1,
      });
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
