/** A webhook endpoint's deliveries: list and inspect them, send one again, replay a range and follow it, send a test. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestRedelivery, requestReplay } from '../../core/commands/webhook-delivery.js';
import type { WebhookDeliveryAccess } from '../../webhook-delivery/index.js';
import { EVENT_KINDS } from '../../core/alarms.js';
import type { ApiContext } from '../context.js';
import { parseEnumList, parseKindList } from '../list-filters.js';
import { ListCursor, idKey } from '../pagination.js';
import { authOf } from '../plugins/auth.js';
import { ApiError, notFound } from '../problem.js';
import { webhookById } from '../queries/webhooks.js';
import { problemResponse } from '../schemas/error-responses.js';
import {
  DELIVERY_STATES,
  DeliveryDetail,
  DeliveryList,
  DeliveryParams,
  ListDeliveriesQuery,
  Replay,
  ReplayAccepted,
  ReplayBody,
  ReplayParams,
  TestDeliveryBody,
  TestDeliveryResult,
  WebhookIdParams,
  attemptBody,
  deliveryBody,
  replayBody,
} from '../schemas/webhook-deliveries.js';

const cursors = new ListCursor('webhook-deliveries', idKey);
const unavailable = problemResponse('Webhook delivery does not run in this API process (`webhooks_unavailable`)');

export async function webhookDeliveryRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  /** The delivery service, caught up with the log, and the endpoint known to it. */
  const deliveryFor = async (customerId: string, webhookId: string): Promise<WebhookDeliveryAccess> => {
    if (!webhookById(ctx.readModelDb, customerId, webhookId)) throw notFound('webhook', webhookId);
    const delivery = ctx.webhookDelivery;
    if (!delivery) throw new ApiError(503, 'webhooks_unavailable', 'Webhook delivery does not run in this API process; ask a node with the webhooks role.');
    await delivery.catchUp();
    if (!delivery.reads.hasEndpoint(customerId, webhookId)) {
      throw new ApiError(503, 'webhooks_unavailable', "This endpoint is delivered by another node (FLEET_WEBHOOK_SHARD); ask the node of its shard.");
    }
    return delivery;
  };

  r.get(
    '/v1/webhooks/:id/deliveries',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        tags: ['Webhooks'],
        summary: "List an endpoint's deliveries, newest first (kept 30 days)",
        description: 'Filter with `state` (failed: the ones to look at) and `event` (exact kinds and prefix.*), each a comma list.',
        operationId: 'listWebhookDeliveries',
        params: WebhookIdParams,
        querystring: ListDeliveriesQuery,
        response: { 200: DeliveryList, 503: unavailable },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const q = request.query;
      const states = parseEnumList(q.state, DELIVERY_STATES, '/query/state');
      const kinds = parseKindList(q.event, EVENT_KINDS, '/query/event');
      const delivery = await deliveryFor(auth.customerId, request.params.id);
      // Unfiltered, the hash is that of {} as before the filters existed: cursors handed out then stay valid.
      const cursor = cursors.for({ ...(states && { state: states }), ...(kinds && { event: kinds }) });
      const before = cursor.decode(q.cursor);
      const rows = delivery.reads.deliveries(auth.customerId, request.params.id, before, q.limit + 1, { states, kinds });
      const page = cursor.page(rows, q.limit, (d) => d.delivery_id);
      return { data: page.data.map(deliveryBody), pagination: page.pagination };
    },
  );

  r.get(
    '/v1/webhooks/:id/deliveries/:delivery_id',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Get a delivery with every attempt',
        operationId: 'getWebhookDelivery',
        params: DeliveryParams,
        response: { 200: DeliveryDetail, 503: unavailable },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const delivery = await deliveryFor(auth.customerId, request.params.id);
      const d = delivery.reads.delivery(auth.customerId, request.params.id, request.params.delivery_id);
      if (!d) throw notFound('delivery', request.params.delivery_id);
      return { ...deliveryBody(d), attempt_log: d.attempt_log.map(attemptBody) };
    },
  );

  r.post(
    '/v1/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Send a delivery again now (same event_id and body; attempts continue)',
        operationId: 'redeliverWebhookDelivery',
        params: DeliveryParams,
        response: { 202: DeliveryDetail, 503: unavailable },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const { id, delivery_id } = request.params;
      const delivery = await deliveryFor(auth.customerId, id);
      if (!delivery.reads.delivery(auth.customerId, id, delivery_id)) throw notFound('delivery', delivery_id);
      await delivery.waitFor(await requestRedelivery(ctx.store, ctx.clock, { customer_id: auth.customerId, webhook_id: id, delivery_id }));
      const d = delivery.reads.delivery(auth.customerId, id, delivery_id)!;
      return reply.status(202).send({ ...deliveryBody(d), attempt_log: d.attempt_log.map(attemptBody) });
    },
  );

  r.post(
    '/v1/webhooks/:id/replay',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Send every matching event of a time range again, with its original event_id',
        description: 'Events are matched by when they happened (`occurred_at`), in [from, to), at most 31 days. New deliveries carry `replay_id`.',
        operationId: 'replayWebhookEvents',
        params: WebhookIdParams,
        body: ReplayBody,
        response: { 202: ReplayAccepted, 503: unavailable },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      await deliveryFor(auth.customerId, request.params.id);
      const body = request.body;
      const { replay_id } = await requestReplay(ctx.store, ctx.clock, {
        customer_id: auth.customerId,
        webhook_id: request.params.id,
        from: Date.parse(body.from),
        to: Date.parse(body.to),
        events: body.events ?? null,
      });
      return reply
        .status(202)
        .header('Location', `/v1/webhooks/${request.params.id}/replays/${replay_id}`)
        .send({ replay_id, from: body.from, to: body.to, events: body.events ?? null });
    },
  );

  r.get(
    '/v1/webhooks/:id/replays/:replay_id',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Get a replay: its state and how many deliveries it queued',
        operationId: 'getWebhookReplay',
        params: ReplayParams,
        response: { 200: Replay, 503: unavailable },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const delivery = await deliveryFor(auth.customerId, request.params.id);
      const replay = delivery.reads.replay(auth.customerId, request.params.id, request.params.replay_id);
      if (!replay) throw notFound('replay', request.params.replay_id);
      return replayBody(replay);
    },
  );

  r.post(
    '/v1/webhooks/:id/test',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Send a signed sample now and see what the receiver answered',
        description: 'Outside the queue and the plan limit; nothing is retried or logged as a delivery.',
        operationId: 'testWebhook',
        params: WebhookIdParams,
        body: TestDeliveryBody,
        response: { 200: TestDeliveryResult, 503: unavailable },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const delivery = await deliveryFor(auth.customerId, request.params.id);
      const result = await delivery.reads.sendTest(auth.customerId, request.params.id, request.body?.event ?? 'position.updated');
      if (!result) throw notFound('webhook', request.params.id);
      return {
        delivered: result.ok,
        status: result.status,
        latency_ms: Math.round(result.latencyMs),
        error: result.error,
        response_body_start: result.responseBodyStart,
        event_id: result.event_id,
        delivery_id: result.delivery_id,
        body: result.body,
      };
    },
  );
}
