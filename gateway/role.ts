/**
 * The gateway role: in a worker thread of its own (thread.ts) when other roles share the process, so a
 * projection batch or an API request never delays a device's ack; else in this thread (from-config.ts).
 * Its modules load as it starts: a process that does not run it never loads them.
 */
import type { AppendCounts } from '../core/event-store/counting.js';
import type { GatewayReading } from '../core/gateway-counters.js';
import type { RoleContext, RoleHandle } from '../core/role.js';
import type { ProtocolName } from './protocol.js';

export interface GatewayRole extends RoleHandle {
  /** The ports its listeners bound, by protocol. */
  ports: Record<ProtocolName, number>;
  /** Its counters, for /metrics; from a thread, as of its last snapshot (once a second). */
  metrics(): GatewayReading;
  /**
   * The appends of its thread's own handle on the store, for the store's write health; null in this
   * thread, where it appends through the composition root's (counted) store.
   */
  appends: (() => AppendCounts) | null;
}

/** Resolves once every listener is up. */
export async function startGateway(ctx: RoleContext): Promise<GatewayRole> {
  if (ctx.threads) {
    const { GatewayThread } = await import('./thread.js');
    const { thread, ports } = await GatewayThread.start(ctx.config, ctx.onThreadFailure);
    return {
      ports,
      metrics: () => ({ stats: thread.stats, openConnections: thread.openConnections }),
      appends: () => thread.appends,
      stop: () => thread.stop(),
    };
  }
  const { gatewayFromConfig } = await import('./from-config.js');
  const gateway = gatewayFromConfig(ctx.config, ctx.store, ctx.clock, ctx.log.child({ role: 'gateway' }));
  const ports = await gateway.start();
  return {
    ports,
    metrics: () => ({ stats: gateway.stats, openConnections: gateway.openConnections }),
    appends: null,
    stop: () => gateway.stop(),
  };
}
