/**
 * The webhooks role: delivery in a worker thread of its own (thread.ts) when other roles share the
 * process, so signing and sending never share the API's thread; else in this thread (from-config.ts).
 * Its modules load as it starts: a process that does not run it never loads them.
 */
import type { RoleContext, RoleHandle } from '../core/role.js';
import type { SecretBox } from '../core/secret-box.js';
import type { WebhookDeliveryAccess } from './delivery-log.js';

/** What the API reads of delivery (an endpoint's deliveries, test sends), from whichever thread runs it. */
export type WebhooksRole = WebhookDeliveryAccess & RoleHandle;

/** Resolves once delivery has caught up with the log and runs. */
export async function startWebhooks(ctx: RoleContext, secretBox: SecretBox): Promise<WebhooksRole> {
  if (ctx.threads) {
    const { WebhookThread } = await import('./thread.js');
    return WebhookThread.start(ctx.config, secretBox, ctx.clock, ctx.onThreadFailure);
  }
  const { webhookDeliveryFromConfig } = await import('./from-config.js');
  const delivery = await webhookDeliveryFromConfig(ctx.config, ctx.store, ctx.clock, ctx.log.child({ role: 'webhooks' }), secretBox);
  await delivery.start();
  return delivery;
}
