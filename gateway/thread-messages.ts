/** What the gateway's thread (thread-entry.ts) and its host (thread.ts) say to each other. */
import type { AppendCounts } from '../core/event-store/counting.js';
import type { ProtocolName } from './protocol.js';
import type { GatewayStats } from './stats.js';

export interface GatewaySnapshot {
  stats: GatewayStats;
  openConnections: number;
  appends: AppendCounts;
}

export type FromGatewayThread =
  | { type: 'started'; ports: Record<ProtocolName, number> }
  | ({ type: 'snapshot' } & GatewaySnapshot)
  | ({ type: 'stopped' } & GatewaySnapshot);

export type ToGatewayThread = { type: 'stop' };
