/**
 * How far the read models are behind the log, for /readyz and /metrics:
 * the events stored after the runner's checkpoint (counted up to a cap, so a
 * scrape during a large replay stays cheap) and the age of the oldest one.
 */
import type { Clock } from '../core/clock.js';
import type { EventStore, LogPosition } from '../core/event-store/port.js';

export interface ProjectionLag {
  /** Events stored but not yet applied; `capped` when there are at least that many. */
  events: number;
  capped: boolean;
  /** Seconds since the oldest unapplied event was stored; 0 when caught up. */
  seconds: number;
}

export const LAG_COUNT_CAP = 1000;

export async function measureLag(
  store: EventStore,
  checkpoint: LogPosition | null,
  clock: Clock,
  cap = LAG_COUNT_CAP,
): Promise<ProjectionLag> {
  const pending = await store.readAll({ ...(checkpoint ? { after: checkpoint } : {}), maxCount: cap });
  const oldest = pending[0];
  return {
    events: pending.length,
    capped: pending.length >= cap,
    seconds: oldest ? Math.max(0, (clock.now() - oldest.created) / 1000) : 0,
  };
}
