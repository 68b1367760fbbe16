/**
 * The Fastify application as a plugin-style builder: errors, metrics, auth,
 * rate limits, the OpenAPI document, routes. api/server.ts owns listening and
 * shutdown.
 *
 * Route documentation convention (the OpenAPI document is built from it):
 * - `schema.tags`: one tag naming the resource, from TAGS in
 *   api/plugins/openapi.ts ('Devices', 'API keys', ...).
 * - `schema.summary`: a short imperative sentence ("List devices").
 * - `schema.operationId`: camelCase verb + resource: `list<Things>` (GET
 *   collection), `get<Thing>` (GET one), `create<Thing>` (POST collection),
 *   `update<Thing>` (PATCH), `delete<Thing>` (DELETE), or a verb of its own for
 *   actions (`revokeApiKey`, `issueOAuthToken`, `rotateWebhookSecret`).
 * - `config.scope`: the scope the route needs (an array: any one of them);
 *   none makes it public. Security requirements, the 429 response and the
 *   rate-limit headers are derived from it; errors are documented as
 *   application/problem+json.
 * Missing tags, summaries and operationIds get derived fallbacks so the
 * document stays valid, but a route should state its own.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../core/logger.js';
import { settingsOf, type ApiContext } from './context.js';
import { KeyUsageRecorder } from './key-usage.js';
import { createMetrics } from './metrics.js';
import { panelRoutes, type Panel } from './panel.js';
import { registerAccessControl } from './plugins/access.js';
import { SharedBudgets } from './shared-rate-limit.js';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling } from './plugins/errors.js';
import { registerJsonBodies } from './plugins/json-bodies.js';
import { registerOpenApi } from './plugins/openapi.js';
import { registerValidation } from './plugins/validation.js';
import { accumulatorsRoutes } from './routes/accumulators.js';
import { apiKeysRoutes } from './routes/api-keys.js';
import { commandsRoutes } from './routes/commands.js';
import { deviceRoutes } from './routes/devices.js';
import { driversRoutes } from './routes/drivers.js';
import { errorDocsRoutes } from './routes/error-docs.js';
import { eventsRoutes } from './routes/events.js';
import { geofencesRoutes } from './routes/geofences.js';
import { healthRoutes } from './routes/health.js';
import { oauthRoutes } from './routes/oauth.js';
import { opsRoutes } from './routes/ops.js';
import { positionRoutes } from './routes/positions.js';
import { postmanRoutes } from './routes/postman.js';
import { sessionsRoutes } from './routes/sessions.js';
import { webhookDeliveryRoutes } from './routes/webhook-deliveries.js';
import { streamRoutes } from './routes/stream.js';
import { tripRulesRoutes } from './routes/trip-rules.js';
import { tripsRoutes } from './routes/trips.js';
import { webhooksRoutes } from './routes/webhooks.js';

/** Request bodies above this are refused with 413 (geofence polygons are the largest legitimate ones). */
export const BODY_LIMIT_BYTES = 256 * 1024;

declare module 'fastify' {
  interface FastifyInstance {
    /** API key `last_used_at` bookkeeping (flushed on close; tests flush it by hand). */
    keyUsage: KeyUsageRecorder;
  }
}

/** `req_` + this process's random prefix + a counter: unique, and far cheaper than a UUID per request. */
function requestIds(): () => string {
  const prefix = randomUUID().replace(/-/g, '').slice(0, 16);
  let next = 0;
  return () => `req_${prefix}${(next++).toString(36).padStart(8, '0')}`;
}

export async function buildApp(ctx: ApiContext, log: Logger): Promise<FastifyInstance> {
  const settings = settingsOf(ctx);
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    // Per-request lines would drown the gateway's logs; errors are still logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    // Only the configured proxies may name the client: request.ip keys the login and token limits.
    ...(settings.trustProxy.length > 0 ? { trustProxy: settings.trustProxy } : {}),
    genReqId: requestIds(),
    // Errors Fastify or Node would otherwise answer in their own JSON shape.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  });
  // The panel's routes are added after the OpenAPI plugin (below); its page fallback answers misses from then on.
  let panel: Panel | null = null;
  registerErrorHandling(app, settings.publicUrl, async (request, reply) => (panel ? panel.fallback(request, reply) : false));
  registerJsonBodies(app);
  registerValidation(app);
  const metrics = createMetrics(app, ctx.projections, ctx.metrics);

  const keyUsage = new KeyUsageRecorder(ctx.store, log, settings.keyUsageFlushMs);
  keyUsage.start();
  app.decorate('keyUsage', keyUsage);
  app.addHook('onClose', async () => keyUsage.stop());

  const csrfKey = ctx.secretBox.derivedKey('csrf');
  registerAccessControl(
    app,
    {
      readModelDb: ctx.readModelDb,
      clock: ctx.clock,
      keyUsage,
      catchUp: ctx.catchUp,
      onApplied: ctx.projections.onApplied,
      csrfKey,
    },
    ctx.clock,
    settings.rateLimits,
    ctx.coordination ? new SharedBudgets(ctx.coordination, log) : null,
  );

  // Before every route: the document only contains routes added after it.
  await registerOpenApi(app, settings.publicUrl);
  await postmanRoutes(app);
  await errorDocsRoutes(app);
  await healthRoutes(app);
  await opsRoutes(app, ctx, metrics);
  await deviceRoutes(app, ctx);
  await commandsRoutes(app, ctx);
  await positionRoutes(app, ctx);
  await eventsRoutes(app, ctx);
  await geofencesRoutes(app, ctx);
  await driversRoutes(app, ctx);
  await tripsRoutes(app, ctx);
  await accumulatorsRoutes(app, ctx);
  await tripRulesRoutes(app, ctx);
  await webhooksRoutes(app, ctx);
  await apiKeysRoutes(app, ctx, keyUsage);
  await oauthRoutes(app, ctx);
  await sessionsRoutes(app, ctx, csrfKey);
  await streamRoutes(app, ctx, metrics.registry);
  await webhookDeliveryRoutes(app, ctx);
  panel = await panelRoutes(app, settings);
  return app;
}
