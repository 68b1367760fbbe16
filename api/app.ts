/**
 * The Fastify application as a plugin-style builder: errors, auth, routes.
 * api/server.ts owns listening and shutdown.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../core/logger.js';
import type { ApiContext } from './context.js';
import { registerAuth } from './plugins/auth.js';
import { registerErrorHandling } from './plugins/errors.js';
import { apiKeysRoutes } from './routes/api-keys.js';
import { deviceRoutes } from './routes/devices.js';
import { driversRoutes } from './routes/drivers.js';
import { eventsRoutes } from './routes/events.js';
import { geofencesRoutes } from './routes/geofences.js';
import { healthRoutes } from './routes/health.js';
import { oauthRoutes } from './routes/oauth.js';
import { opsRoutes } from './routes/ops.js';
import { positionRoutes } from './routes/positions.js';
import { streamRoutes } from './routes/stream.js';

/** Request bodies above this are refused with 413 (geofence polygons are the largest legitimate ones). */
export const BODY_LIMIT_BYTES = 256 * 1024;

export async function buildApp(ctx: ApiContext, log: Logger): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    // Per-request lines would drown the gateway's logs; errors are still logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: () => `req_${randomUUID().replace(/-/g, '')}`,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: true, useDefaults: true, allErrors: true } },
  });
  registerErrorHandling(app);
  registerAuth(app, ctx.readModels, ctx.catchUp);
  await healthRoutes(app);
  await deviceRoutes(app, ctx);
  await positionRoutes(app, ctx);
  await eventsRoutes(app, ctx);
  await geofencesRoutes(app, ctx);
  await driversRoutes(app, ctx);
  await apiKeysRoutes(app, ctx);
  await oauthRoutes(app, ctx);
  await streamRoutes(app, ctx);
  await opsRoutes(app, ctx);
  return app;
}
