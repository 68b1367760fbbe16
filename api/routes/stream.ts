/**
 * GET /v1/stream: live positions and events of the tenant as server-sent
 * events. Event ids are log positions: a client reconnecting with
 * Last-Event-ID gets what it missed replayed from the store, then live
 * events as the projection runner commits them. A `position` needs
 * positions:read, an `event` events:read; a credential with one of them gets
 * that type only. The credential is checked at connect and then followed:
 * the stream ends when it is revoked or expires.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import type { LogPosition, RecordedEvent } from '../../core/event-store/port.js';
import { comparePositions, positionFromString, positionToString } from '../../core/event-store/port.js';
import type { DeviceEventRaised, PositionRecorded } from '../../core/events.js';
import { settingsOf, type ApiContext } from '../context.js';
import { closeOnExpiry, revokes } from '../credential-lifetime.js';
import { authOf, hasScope } from '../plugins/auth.js';
import { iso } from '../schemas/common.js';
import { fixBody } from '../schemas/positions.js';
import { StreamEvent, StreamHeaders, StreamPosition } from '../schemas/stream.js';
import { SseConnection } from '../sse.js';

/** Store events read per replay step. */
const REPLAY_BATCH = 500;
/** Beyond this many log events to scan, a resume is cut short with a `gap` event (use the REST lists to fill it). */
const REPLAY_SCAN_LIMIT = 100_000;

type Relevant = RecordedEvent<PositionRecorded> | RecordedEvent<DeviceEventRaised>;

function positionData(e: PositionRecorded['data'], deviceName: string | null): Static<typeof StreamPosition> {
  return { device_id: e.device_id, device_name: deviceName, ...fixBody(e), valid: e.valid };
}


function eventData(e: DeviceEventRaised['data'], deviceName: string | null): Static<typeof StreamEvent> {
  return {
    ...e.fields,
    event: e.kind,
    event_id: e.event_id,
    occurred_at: iso(e.occurred_at),
    device_id: e.device_id,
    device_name: deviceName,
    driver_id: e.driver_id,
    severity: e.severity,
    source: e.source,
    position: e.position
      ? { lat: e.position.lat, lng: e.position.lng, speed_kmh: e.position.speed_kmh, timestamp: iso(e.position.timestamp) }
      : null,
  };
}

export async function streamRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const keepAliveMs = settingsOf(ctx).streamKeepAliveMs;
  const open = new Set<SseConnection>();
  const deviceName = ctx.readModelDb
    .prepare('SELECT name FROM devices WHERE device_id = ? AND customer_id = ?')
    .pluck();
  // Streams never end on their own: close them so the server can shut down.
  app.addHook('preClose', async () => {
    for (const c of open) c.close();
  });

  r.get(
    '/v1/stream',
    {
      config: { scope: ['positions:read', 'events:read'] },
      // A HEAD would hold a stream open with nothing to show for it.
      exposeHeadRoute: false,
      schema: {
        tags: ['Stream'],
        summary: 'Live positions and events (server-sent events)',
        operationId: 'streamLive',
        description:
          'Server-sent events: `event: position` (data: a position with device_id) and `event: event` ' +
          '(data: the webhook payload of the kind). Each `id` is a log position; reconnect with `Last-Event-ID` to ' +
          'resume after it. Comments (`: keep-alive`) are sent every 15 s. A `gap` event means a resume went too far ' +
          'back: fill it from GET /v1/positions and GET /v1/events.',
        headers: StreamHeaders,
        response: {
          200: { description: 'The stream', content: { 'text/event-stream': { schema: Type.String() } } },
        },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const wantPositions = hasScope(auth.scopes, 'positions:read');
      const wantEvents = hasScope(auth.scopes, 'events:read');
      const lastHeader = request.headers['last-event-id'];
      let last: LogPosition | null = typeof lastHeader === 'string' ? positionFromString(lastHeader) : null;

      const relevant = (e: RecordedEvent): e is Relevant =>
        (wantPositions && e.type === 'PositionRecorded' && e.data.customer_id === auth.customerId) ||
        (wantEvents && e.type === 'DeviceEventRaised' && e.data.customer_id === auth.customerId);
      const send = (e: Relevant): void => {
        if (last && comparePositions(e.position, last) <= 0) return;
        last = e.position;
        const name = (deviceName.get(e.data.device_id, auth.customerId) as string | null | undefined) ?? null;
        if (e.type === 'PositionRecorded') conn.send('position', positionToString(e.position), positionData(e.data, name));
        else conn.send('event', positionToString(e.position), eventData(e.data, name));
      };

      reply.hijack();
      const conn = new SseConnection(reply.raw, keepAliveMs, reply.getHeaders());
      open.add(conn);

      // Live events are queued while the replay runs; everything up to `boundary` comes from the store.
      const boundary = ctx.projections.position();
      let queue: Relevant[] | null = [];
      const unsubscribe = ctx.projections.onApplied((batch) => {
        for (const e of batch) {
          if (revokes(auth, e)) return conn.close('credential revoked');
          if (!relevant(e)) continue;
          if (queue) queue.push(e);
          else send(e);
        }
      });
      conn.onClose(() => {
        unsubscribe();
        open.delete(conn);
      });
      closeOnExpiry(conn, auth, ctx.clock);

      try {
        if (last && boundary) await replay(last, boundary);
      } catch (err) {
        request.log.error({ err }, 'stream replay failed');
        conn.close();
        return;
      }
      const queued = queue;
      queue = null;
      for (const e of queued) send(e);

      async function replay(from: LogPosition, to: LogPosition): Promise<void> {
        let after = from;
        let scanned = 0;
        while (!conn.isClosed && comparePositions(after, to) < 0) {
          const batch = await ctx.store.readAll({ after, maxCount: REPLAY_BATCH });
          if (batch.length === 0) return;
          for (const e of batch) {
            if (comparePositions(e.position, to) > 0) return;
            if (relevant(e)) send(e);
          }
          after = batch[batch.length - 1]!.position;
          scanned += batch.length;
          if (scanned >= REPLAY_SCAN_LIMIT && comparePositions(after, to) < 0) {
            conn.send('gap', positionToString(to), { from: positionToString(after), to: positionToString(to) });
            last = to;
            return;
          }
          await conn.drained();
        }
      }
    },
  );
}
