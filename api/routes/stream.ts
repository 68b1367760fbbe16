/**
 * GET /v1/stream: live positions and events of the tenant as server-sent
 * events. Event ids are log positions: a client reconnecting with
 * Last-Event-ID gets what it missed replayed from the store, then live
 * events as the projection runner commits them. A `position` needs
 * positions:read, an `event` events:read, a `command` (sent, succeeded,
 * failed, expired) commands:read; a credential gets the types its scopes allow. The credential is checked at connect and then followed:
 * the stream ends when it is revoked or expires.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { sensorAttributes } from '../sensor-attributes.js';
import { Type, type Static } from '@sinclair/typebox';
import type { Registry } from 'prom-client';
import { Counter, Gauge } from 'prom-client';
import type { LogPosition, RecordedEvent } from '../../core/event-store/port.js';
import { comparePositions, positionFromString, positionToString } from '../../core/event-store/port.js';
import { commandEventId, commandView, publishedCommandKind } from '../../core/command-view.js';
import type { DeviceCommandEvent, DeviceEventRaised, PositionRecorded } from '../../core/events.js';
import { settingsOf, type ApiContext } from '../context.js';
import { closeOnExpiry, revokes } from '../credential-lifetime.js';
import { authOf, hasScope } from '../plugins/auth.js';
import { iso } from '../schemas/common.js';
import { fixBody } from '../schemas/positions.js';
import { StreamCommand, StreamEvent, StreamHeaders, StreamPosition } from '../schemas/stream.js';
import { ApiError } from '../problem.js';
import { problemResponse } from '../schemas/error-responses.js';
import { SseConnection } from '../sse.js';
import { StreamCaps } from '../stream-caps.js';
import { StreamReplays } from '../stream-replay.js';

/** What a client refused by a stream cap is told to wait before trying again. */
const STREAM_RETRY_AFTER_S = 30;

type Relevant = RecordedEvent<PositionRecorded> | RecordedEvent<DeviceEventRaised> | RecordedEvent<DeviceCommandEvent>;

function positionData(e: PositionRecorded['data'], deviceName: string | null): Static<typeof StreamPosition> {
  return { device_id: e.device_id, device_name: deviceName, ...fixBody(e), valid: e.valid, attributes: sensorAttributes(e) };
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

/** A published command event: the webhook payload of its kind, minus `sequence`. */
function commandData(e: RecordedEvent<DeviceCommandEvent>, deviceName: string | null): Static<typeof StreamCommand> {
  const kind = publishedCommandKind(e.type)!;
  return { event: kind, event_id: commandEventId(kind, e.data.at, e.id), occurred_at: iso(e.data.at), device_id: e.data.device_id, device_name: deviceName, command: commandView(e.data.command) };
}

export async function streamRoutes(app: FastifyInstance, ctx: ApiContext, metrics: Registry): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const settings = settingsOf(ctx);
  const keepAliveMs = settings.streamKeepAliveMs;
  const open = new Set<SseConnection>();
  const caps = new StreamCaps(settings.streamCaps);
  const replays = new StreamReplays(ctx.readModelDb, ctx.store);
  new Gauge({
    name: 'fleet_api_streams_open',
    help: 'Live streams (GET /v1/stream) open',
    registers: [metrics],
    collect() {
      this.set(caps.openStreams);
    },
  });
  new Counter({
    name: 'fleet_api_streams_refused_total',
    help: 'Live streams refused by the per-credential or per-customer cap',
    registers: [metrics],
    collect() {
      this.reset();
      this.inc(caps.refusedStreams);
    },
  });
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
      config: { scope: ['positions:read', 'events:read', 'commands:read'] },
      // A HEAD would hold a stream open with nothing to show for it.
      exposeHeadRoute: false,
      schema: {
        tags: ['Stream'],
        summary: 'Live positions and events (server-sent events)',
        operationId: 'streamLive',
        description:
          'Server-sent events: `event: position` (data: a position with device_id) and `event: event` ' +
          '(data: the webhook payload of the kind), and `event: command` (data: `command.sent`, `command.succeeded`, ' +
          '`command.failed` or `command.expired` with the command), each for a credential with its scope. Each `id` is a log position; reconnect with `Last-Event-ID` to ' +
          'resume after it. Comments (`: keep-alive`) are sent every 15 s. A `gap` event means a resume went too far ' +
          'back: fill it from GET /v1/positions and GET /v1/events.',
        headers: StreamHeaders,
        response: {
          200: { description: 'The stream', content: { 'text/event-stream': { schema: Type.String() } } },
          400: problemResponse('`Last-Event-ID` is past the end of the log (`unknown_last_event_id`), or malformed'),
          429: problemResponse('This credential or customer already holds as many live streams as allowed (`too_many_streams`)', {
            'Retry-After': { type: 'string', description: 'Seconds to wait before connecting again' },
          }),
        },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const wantPositions = hasScope(auth.scopes, 'positions:read');
      const wantEvents = hasScope(auth.scopes, 'events:read');
      const wantCommands = hasScope(auth.scopes, 'commands:read');
      let last = await resumePosition(request.headers['last-event-id'], ctx);

      const relevant = (e: RecordedEvent): e is Relevant =>
        (wantPositions && e.type === 'PositionRecorded' && e.data.customer_id === auth.customerId) ||
        (wantEvents && e.type === 'DeviceEventRaised' && e.data.customer_id === auth.customerId) ||
        (wantCommands && publishedCommandKind(e.type) !== null && (e as RecordedEvent<DeviceCommandEvent>).data.customer_id === auth.customerId);
      const send = (e: Relevant): void => {
        if (last && comparePositions(e.position, last) <= 0) return;
        last = e.position;
        const name = (deviceName.get(e.data.device_id, auth.customerId) as string | null | undefined) ?? null;
        if (e.type === 'PositionRecorded') conn.send('position', positionToString(e.position), positionData(e.data, name));
        else if (e.type === 'DeviceEventRaised') conn.send('event', positionToString(e.position), eventData(e.data, name));
        else conn.send('command', positionToString(e.position), commandData(e, name));
      };

      const place = caps.reserve(auth.customerId, auth.credential.id);
      if ('refused' in place) {
        const limit = place.refused === 'credential' ? caps.limits.perCredential : caps.limits.perCustomer;
        throw new ApiError(
          429,
          'too_many_streams',
          `At most ${limit} live streams may be open ${place.refused === 'credential' ? 'per credential' : 'per customer'}; close one first.`,
          [],
          { 'Retry-After': String(STREAM_RETRY_AFTER_S) },
        );
      }
      reply.hijack();
      let conn: SseConnection;
      try {
        conn = new SseConnection(reply.raw, keepAliveMs, reply.getHeaders());
      } catch (err) {
        place.release();
        request.log.warn({ err }, 'stream could not start');
        reply.raw.destroy();
        return;
      }
      open.add(conn);

      // Live events are queued while the replay runs (at most MAX_QUEUED_LIVE: past that, the rest is a
      // gap); everything up to `boundary` comes from the store.
      const boundary = ctx.projections.position();
      let queue: Relevant[] | null = [];
      let overflowedAt: LogPosition | null = null;
      const unsubscribe = ctx.projections.onApplied((batch) => {
        for (const e of batch) {
          if (revokes(auth, e)) return conn.close('credential revoked');
          if (!relevant(e)) continue;
          if (!queue) send(e);
          else if (queue.length < MAX_QUEUED_LIVE) queue.push(e);
          else overflowedAt = e.position;
        }
      });
      conn.onClose(() => {
        place.release();
        unsubscribe();
        open.delete(conn);
      });
      closeOnExpiry(conn, auth, ctx.clock);

      if (last && boundary && comparePositions(last, boundary) < 0) {
        try {
          const outcome = await replays.replay({
            customerId: auth.customerId,
            wantPositions,
            wantEvents,
            wantCommands,
            after: last,
            through: boundary,
            isOpen: () => !conn.isClosed,
            send: (e) => {
              if (relevant(e)) send(e);
            },
            drained: () => conn.drained(),
          });
          if (!outcome.complete) {
            conn.send('gap', positionToString(boundary), { from: positionToString(outcome.cutAt), to: positionToString(boundary) });
            last = boundary;
          }
        } catch (err) {
          request.log.error({ err }, 'stream replay failed');
          conn.close();
          return;
        }
      }
      const queued = queue;
      queue = null;
      for (const e of queued) send(e);
      if (overflowedAt) {
        // What came live beyond the queue's bound is not sent: the client fills it from the lists.
        conn.send('gap', positionToString(overflowedAt), { from: positionToString(queued.at(-1)?.position ?? boundary ?? overflowedAt), to: positionToString(overflowedAt) });
        last = overflowedAt;
      }
    },
  );
}

/** Live events held for a stream while its resume replays, at most: a slow client on a busy fleet holds no more. */
const MAX_QUEUED_LIVE = 10_000;

/** How long a resume past this node's read models waits for them (another API node may be ahead), before it is refused. */
const AHEAD_WAIT_MS = 5_000;

/** The position a `Last-Event-ID` (its form checked by the schema) resumes after (null: none), or a 400 when it is past this log's end. */
async function resumePosition(text: string | string[] | undefined, ctx: ApiContext): Promise<LogPosition | null> {
  if (typeof text !== 'string') return null;
  const last = positionFromString(text);
  const boundary = ctx.projections.position();
  if (boundary && comparePositions(last, boundary) <= 0) return last;
  // Polled rather than awaited: a made-up position would leave a waiter behind for good.
  const giveUpAt = Date.now() + AHEAD_WAIT_MS;
  let caughtUp = false;
  while (!caughtUp && Date.now() < giveUpAt) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = ctx.projections.position();
    caughtUp = now !== null && comparePositions(last, now) <= 0;
  }
  if (!caughtUp) {
    throw new ApiError(400, 'unknown_last_event_id', `Last-Event-ID ${text} is past the end of this platform's log: it was not sent by this stream (another store?); reconnect without it.`);
  }
  return last;
}
