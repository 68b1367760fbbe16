/**
 * A role of the platform as the composition root (main.ts) holds it. Each role has one start function in
 * its own folder (gateway/role.ts, projections/role.ts, webhook-delivery/role.ts, api/role.ts); it
 * decides whether the role runs in a worker thread of its own and returns the role's handle: its stop,
 * and what the other roles read of it (counters for /metrics, the read models, webhook deliveries).
 */
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { EventStore } from './event-store/port.js';
import type { Logger } from './logger.js';

export interface RoleHandle {
  /** Stops the role, and its thread if it has one; main.ts stops the roles in the reverse of their start. */
  stop(): Promise<void>;
}

/** What every role's start function is given. */
export interface RoleContext {
  config: Config;
  /** The composition root's handle on the store (counted for /metrics); a role thread opens its own. */
  store: EventStore;
  clock: Clock;
  /** The platform's logger: a role logs through a child named after it. */
  log: Logger;
  /** Whether the roles that can run in worker threads of their own (`fleet` when roles share the process). */
  threads: boolean;
  /** Hears of a role thread that died after it started. */
  onThreadFailure(err: Error): void;
}
