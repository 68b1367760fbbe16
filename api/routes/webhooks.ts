/**
 * Webhook endpoints: create (the secret shown once), list, read, edit,
 * delete, rotate the secret. Deliveries, tests and replays are routes of
 * their own.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { createWebhook, deleteWebhook, rotateWebhookSecret, updateWebhook } from '../../core/commands/webhooks.js';
import { settingsOf, type ApiContext } from '../context.js';
import { NO_STORE } from '../no-store.js';
import { ListCursor, idKey } from '../pagination.js';
import { authOf } from '../plugins/auth.js';
import { notFound } from '../problem.js';
import { webhookById, webhookPage } from '../queries/webhooks.js';
import { iso } from '../schemas/common.js';
import {
  CreateWebhookBody,
  CreatedWebhook,
  ListWebhooksQuery,
  RotateWebhookSecretBody,
  RotatedWebhookSecret,
  UpdateWebhookBody,
  Webhook,
  WebhookList,
  WebhookParams,
  webhookBody,
} from '../schemas/webhooks.js';

const cursors = new ListCursor('webhooks', idKey);


export async function webhooksRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const db = ctx.readModelDb;
  const settings = { box: ctx.secretBox, allowPrivate: settingsOf(ctx).allowPrivateWebhookUrls };

  const current = (customerId: string, id: string) => {
    const row = webhookById(db, customerId, id);
    if (!row) throw notFound('webhook', id);
    return row;
  };

  r.post(
    '/v1/webhooks',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Create a webhook endpoint (the signing secret is shown once)',
        operationId: 'createWebhook',
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const created = await createWebhook(ctx.store, ctx.clock, settings, { ...request.body, customer_id: auth.customerId });
      await ctx.waitFor(created.position);
      const row = webhookById(db, auth.customerId, created.webhook_id);
      if (!row) throw new Error(`webhook ${created.webhook_id} missing from the read model after creation`);
      return reply
        .status(201)
        .headers(NO_STORE)
        .header('Location', `/v1/webhooks/${created.webhook_id}`)
        .send({ ...webhookBody(row), secret: created.secret });
    },
  );

  r.get(
    '/v1/webhooks',
    {
      config: { scope: 'webhooks:read' },
      schema: { tags: ['Webhooks'], summary: 'List webhook endpoints (never their secrets)', operationId: 'listWebhooks', querystring: ListWebhooksQuery, response: { 200: WebhookList } },
    },
    async (request) => {
      const auth = authOf(request);
      const q = request.query;
      const cursor = cursors.for({});
      const rows = webhookPage(db, auth.customerId, cursor.decode(q.cursor), q.limit + 1);
      const result = cursor.page(rows, q.limit, (w) => w.webhook_id);
      return { data: result.data.map(webhookBody), pagination: result.pagination };
    },
  );

  r.get(
    '/v1/webhooks/:id',
    {
      config: { scope: 'webhooks:read' },
      schema: { tags: ['Webhooks'], summary: 'Get a webhook endpoint', operationId: 'getWebhook', params: WebhookParams, response: { 200: Webhook } },
    },
    async (request) => webhookBody(current(authOf(request).customerId, request.params.id)),
  );

  r.patch(
    '/v1/webhooks/:id',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Update a webhook endpoint (merge-patch; enabled true resumes one the platform disabled)',
        operationId: 'updateWebhook',
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: Webhook },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const position = await updateWebhook(ctx.store, ctx.clock, settings, { customer_id: auth.customerId, webhook_id: request.params.id, changes: request.body });
      if (position) await ctx.waitFor(position);
      return webhookBody(current(auth.customerId, request.params.id));
    },
  );

  r.delete(
    '/v1/webhooks/:id',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Delete a webhook endpoint (nothing more is delivered to it)',
        operationId: 'deleteWebhook',
        params: WebhookParams,
        response: { 204: Type.Null({ description: 'Deleted; the id answers 404 from now on' }) },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      await ctx.waitFor(await deleteWebhook(ctx.store, ctx.clock, { customer_id: auth.customerId, webhook_id: request.params.id }));
      return reply.status(204).send(null);
    },
  );

  r.post(
    '/v1/webhooks/:id/rotate-secret',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Rotate the signing secret (the new one is shown once; the old one signs too during the grace period)',
        operationId: 'rotateWebhookSecret',
        params: WebhookParams,
        // Optional: none sent is validated (and defaulted) as {} (api/plugins/json-bodies.ts).
        body: Type.Optional(RotateWebhookSecretBody),
        response: { 200: RotatedWebhookSecret },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const rotated = await rotateWebhookSecret(ctx.store, ctx.clock, settings, {
        customer_id: auth.customerId,
        webhook_id: request.params.id,
        grace_period_s: request.body?.grace_period_s,
      });
      await ctx.waitFor(rotated.position);
      return reply.headers(NO_STORE).send({ secret: rotated.secret, previous_secret_valid_until: iso(rotated.previous_valid_until) });
    },
  );
}
