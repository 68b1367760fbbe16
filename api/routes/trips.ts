/** Trips, stops and idling: lists by start time, or every row of the window as CSV (docs/trips.md). */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { ApiContext } from '../context.js';
import { csvChunks, type CsvValue } from '../exports/formats.js';
import { pages, sendExport } from '../exports/stream.js';
import { commaList } from '../list-filters.js';
import { authOf } from '../plugins/auth.js';
import { ListCursor, timeAndIdKey } from '../pagination.js';
import { latestFoldedFix, spanPage, tripPage, type SpanFilter } from '../queries/trips.js';
import { Span, SpanList, SpansQuery, Trip, TripList, TripsQuery, spanItem, tripItem } from '../schemas/trips.js';
import { parseWindow } from '../time.js';

/** Rows a CSV export reads at a time. */
const EXPORT_PAGE = 1000;

const listResponse = (list: TSchema, what: string) => ({
  description: `A page of ${what}; with format=csv, every ${what.replace(/s$/, '')} of the window as a CSV file`,
  content: { 'application/json': { schema: list }, 'text/csv': { schema: Type.String() } },
});

type TripItem = Static<typeof Trip>;
/** Geofence ids in one CSV field, space-separated (an id holds no space). */
const idList = (ids: string[]) => ids.join(' ');
type SpanItem = Static<typeof Span>;

const TRIP_COLUMNS: Array<[string, (t: TripItem) => CsvValue]> = [
  ['device_id', (t) => t.device_id],
  ['driver_id', (t) => t.driver_id],
  ['start_time', (t) => t.start.time],
  ['start_lat', (t) => t.start.lat],
  ['start_lng', (t) => t.start.lng],
  ['end_time', (t) => t.end.time],
  ['end_lat', (t) => t.end.lat],
  ['end_lng', (t) => t.end.lng],
  ['distance_km', (t) => t.distance_km],
  ['duration_s', (t) => t.duration_s],
  ['max_speed_kmh', (t) => t.max_speed_kmh],
  ['avg_speed_kmh', (t) => t.avg_speed_kmh],
  ['idle_s', (t) => t.idle_s],
  ['start_odometer_km', (t) => t.start.odometer_km],
  ['end_odometer_km', (t) => t.end.odometer_km],
  ['start_engine_hours', (t) => t.start.engine_hours],
  ['end_engine_hours', (t) => t.end.engine_hours],
  ['start_geofences', (t) => idList(t.start.geofences)],
  ['end_geofences', (t) => idList(t.end.geofences)],
];

const SPAN_COLUMNS: Array<[string, (s: SpanItem) => CsvValue]> = [
  ['device_id', (s) => s.device_id],
  ['start_time', (s) => s.start],
  ['end_time', (s) => s.end],
  ['duration_s', (s) => s.duration_s],
  ['lat', (s) => s.lat],
  ['lng', (s) => s.lng],
  ['geofences', (s) => idList(s.geofences)],
];

/** The window and filters of a list, checked; `after` is set per page. */
function filtersOf(q: { device_id?: string | undefined; driver_id?: string | undefined; from?: string | undefined; to?: string | undefined }) {
  const { from, to } = parseWindow(q);
  return { device_id: commaList(q.device_id), driver_id: commaList(q.driver_id), from, to };
}

export async function tripsRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const db = ctx.readModelDb;

  const spanList = (path: '/v1/stops' | '/v1/idling', table: 'stops' | 'idles', what: string, operationId: string) => {
    const cursors = new ListCursor(table, timeAndIdKey);
    const items = (customerId: string, f: SpanFilter) => spanPage(db, table, customerId, f).map((s) => spanItem(s, s.end_t === null ? latestFoldedFix(db, s.device_id) : null));
    r.get(
      path,
      {
        config: { scope: 'positions:read' },
        schema: { tags: ['Reports'], summary: `List ${what} by start time`, operationId, querystring: SpansQuery, response: { 200: listResponse(SpanList, what) } },
      },
      async (request, reply) => {
        const auth = authOf(request);
        const q = request.query;
        const filters = filtersOf(q);
        const base = { deviceIds: filters.device_id, driverIds: null, from: filters.from, to: filters.to };
        if (q.format === 'csv') {
          const walk = pages<{ t: number; id: string }, SpanItem>((after) => {
            const rows = items(auth.customerId, { ...base, after, limit: EXPORT_PAGE });
            const last = rows.at(-1);
            return { rows, next: rows.length === EXPORT_PAGE && last ? { t: Date.parse(last.start), id: last.device_id } : null };
          });
          return sendExport(reply as FastifyReply, { contentType: 'text/csv; charset=utf-8', filename: `${table === 'idles' ? 'idling' : table}.csv` }, csvChunks(SPAN_COLUMNS, walk));
        }
        const cursor = cursors.for(filters);
        const rows = items(auth.customerId, { ...base, after: cursor.decode(q.cursor), limit: q.limit + 1 });
        return cursor.page(rows, q.limit, (s) => ({ t: Date.parse(s.start), id: s.device_id }));
      },
    );
  };

  const tripCursors = new ListCursor('trips', timeAndIdKey);
  r.get(
    '/v1/trips',
    {
      config: { scope: 'positions:read' },
      schema: { tags: ['Reports'], summary: 'List trips by start time', operationId: 'listTrips', querystring: TripsQuery, response: { 200: listResponse(TripList, 'trips') } },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const q = request.query;
      const filters = filtersOf(q);
      const base = { deviceIds: filters.device_id, driverIds: filters.driver_id, from: filters.from, to: filters.to };
      if (q.format === 'csv') {
        const walk = pages<{ t: number; id: string }, TripItem>((after) => {
          const rows = tripPage(db, auth.customerId, { ...base, after, limit: EXPORT_PAGE });
          const last = rows.at(-1);
          return { rows: rows.map(tripItem), next: rows.length === EXPORT_PAGE && last ? { t: last.start_t, id: last.device_id } : null };
        });
        return sendExport(reply as FastifyReply, { contentType: 'text/csv; charset=utf-8', filename: 'trips.csv' }, csvChunks(TRIP_COLUMNS, walk));
      }
      const cursor = tripCursors.for(filters);
      const rows = tripPage(db, auth.customerId, { ...base, after: cursor.decode(q.cursor), limit: q.limit + 1 });
      const page = cursor.page(rows, q.limit, (t) => ({ t: t.start_t, id: t.device_id }));
      return { data: page.data.map(tripItem), pagination: page.pagination };
    },
  );

  spanList('/v1/stops', 'stops', 'stops', 'listStops');
  spanList('/v1/idling', 'idles', 'idling periods', 'listIdling');
}
