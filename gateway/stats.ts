/** The gateway's counters (their type is core/gateway-counters.ts), for logs, benchmarks and /metrics. */
import type { GatewayCounters } from '../core/gateway-counters.js';

export type { ConnectionRejection, GatewayCounters } from '../core/gateway-counters.js';

export function newStats(): GatewayCounters {
  return {
    connections: 0,
    framesAccepted: 0,
    framesRefused: 0,
    recordsStored: 0,
    bytesSkipped: 0,
    unknownDeviceFrames: 0,
    appendFailures: 0,
    connectionsRejected: { listener_cap: 0, total_cap: 0, address_cap: 0, address_backoff: 0 },
    loginTimeouts: 0,
    acceptErrors: 0,
    refusals: {},
    closedForRefusals: 0,
    authCodesIssued: 0,
    deviceEventsSuppressed: { unknown_device: 0, login_refused: 0 },
    connectionsReplaced: 0,
    connectionEventsSuppressed: 0,
    connectionEventsDeferred: 0,
  };
}
