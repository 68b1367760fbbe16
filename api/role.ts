/**
 * The API role: the Fastify app over the read models this thread keeps (projections/role.ts), listening
 * on FLEET_HTTP_HOST:FLEET_HTTP_PORT. The composition root loads this module before the read models
 * catch up, and starts the role after.
 */
import type { StoreWriteStatus } from '../core/event-store/write-health.js';
import type { RoleContext, RoleHandle } from '../core/role.js';
import type { SecretBox } from '../core/secret-box.js';
import type { ReadModelAccess } from '../projections/role.js';
import type { WebhookDeliveryAccess } from '../webhook-delivery/index.js';
import { openCoordination } from '../core/coordination/open.js';
import { buildApp } from './app.js';
import type { MetricsSources } from './context.js';
import { listen, stopApi } from './server.js';

export interface ApiRole extends RoleHandle {
  /** The port it listens on. */
  port: number;
}

export interface ApiInputs {
  secretBox: SecretBox;
  readModels: ReadModelAccess;
  /** Webhook delivery when this process runs it (deliveries, test sends), else null. */
  webhookDelivery: WebhookDeliveryAccess | null;
  /** The other roles' counters and the store's, for /metrics. */
  metrics: MetricsSources;
  /** Whether the store writes: /readyz fails while it cannot. */
  storeWrites: () => StoreWriteStatus;
  /** The API listens once this resolves: the history has caught up. */
  listenAfter: Promise<void>;
}

/** Resolves once the API listens. */
export async function startApi(ctx: RoleContext, inputs: ApiInputs): Promise<ApiRole> {
  const { config, store, clock } = ctx;
  const { readModels } = inputs;
  const coordination = await openCoordination(config.store);
  // Built (its route schemas compiled) while the history may still be catching up; it listens once that is done.
  const app = await buildApp(
    {
      store,
      clock,
      readModelDb: readModels.db,
      historyDbPath: readModels.historyDbPath,
      secretBox: inputs.secretBox,
      waitFor: (p) => readModels.waitFor(p),
      catchUp: () => readModels.catchUp(),
      projections: readModels.view,
      storeWrites: inputs.storeWrites,
      webhookDelivery: inputs.webhookDelivery,
      coordination,
      settings: {
        publicUrl: config.publicUrl,
        allowPrivateWebhookUrls: config.allowPrivateWebhookUrls,
        trustProxy: config.trustProxy,
        panelTileUrl: config.panelTileUrl,
        panelTileAttribution: config.panelTileAttribution,
      },
      metrics: inputs.metrics,
    },
    ctx.log.child({ role: 'api' }),
  );
  const stop = async () => {
    await stopApi(app);
    await coordination?.close();
  };
  await app.ready();
  await inputs.listenAfter;
  return { port: await listen(app, config.httpHost, config.httpPort), stop };
}
