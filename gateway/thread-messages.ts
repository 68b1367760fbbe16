/** What the gateway's thread (thread-entry.ts) and its host (thread.ts) say to each other. */
import type { AppendCounts } from '../core/event-store/counting.js';
import type { GatewayReading } from '../core/gateway-counters.js';
import type { ProtocolName } from './protocol.js';

/** The gateway's counters, and the appends of the thread's own handle on the store (write health). */
export interface GatewaySnapshot extends GatewayReading {
  appends: AppendCounts;
}

export type FromGatewayThread =
  | { type: 'started'; ports: Record<ProtocolName, number> }
  | ({ type: 'snapshot' } & GatewaySnapshot)
  | ({ type: 'stopped' } & GatewaySnapshot);

export type ToGatewayThread = { type: 'stop' };
