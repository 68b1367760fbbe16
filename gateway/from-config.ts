/** The gateway the configuration describes: one listener per protocol on its port. */
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { EventStore } from '../core/event-store/port.js';
import type { Logger } from '../core/logger.js';
import { protocols } from './protocols/index.js';
import { Gateway } from './server.js';

export function gatewayFromConfig(config: Config, store: EventStore, clock: Clock, log: Logger): Gateway {
  return new Gateway({
    store,
    clock,
    log,
    host: config.gatewayHost,
    listeners: [
      { protocol: protocols.teltonika, port: config.teltonikaPort },
      { protocol: protocols.gt06, port: config.gt06Port },
      { protocol: protocols.jt808, port: config.jt808Port },
    ],
    offlineAfterS: config.offlineAfterS,
    loginTimeoutS: config.loginTimeoutS,
    maxConnections: config.maxConnections,
    maxTotalConnections: config.maxTotalConnections,
    maxConnectionsPerAddress: config.maxConnectionsPerAddress,
    maxQueuedFrames: config.maxQueuedFrames,
    commandReplyTimeoutMs: config.commandReplyTimeoutS * 1000,
  });
}
