/**
 * The expiry sweep: a timer beside the read models that turns commands still
 * queued at their `expires_at` into `expired`, whether or not the unit ever
 * logs in. It finds them in the commands read model and appends through the
 * expire decision with the stream's expected revision: a send that got in
 * first wins (the decision then finds nothing to expire), and two nodes
 * sweeping at once append one event.
 */
import type Database from 'better-sqlite3';
import type { Clock } from '../../core/clock.js';
import { expireCommand, type CommandRef } from '../../core/commands/device-commands.js';
import type { EventStore } from '../../core/event-store/port.js';
import type { Logger } from '../../core/logger.js';
import { boundLimit } from '../../core/sqlite-limit.js';

/** How often the sweep looks: an expired command shows as such within about this much of its expiry. */
export const EXPIRY_SWEEP_MS = 1000;
/** Commands expired per pass; the rest wait for the next one. */
const PER_PASS = 200;

export interface CommandExpiry {
  /** One pass now: the commands it expired. */
  sweep(): Promise<number>;
  stop(): Promise<void>;
}

export function startCommandExpiry(deps: { store: EventStore; clock: Clock; db: Database.Database; log: Logger; intervalMs?: number }): CommandExpiry {
  const due = deps.db.prepare(`SELECT device_id, command_id FROM commands WHERE status = 'queued' AND expires_at <= ? ORDER BY expires_at LIMIT ${boundLimit()}`);
  let running: Promise<number> | null = null;
  let stopped = false;
  const pass = async (): Promise<number> => {
    let expired = 0;
    for (const ref of due.all(deps.clock.now(), PER_PASS) as CommandRef[]) {
      if (stopped) break;
      try {
        if ((await expireCommand(deps.store, deps.clock, ref)).position) expired++;
      } catch (err) {
        deps.log.warn({ err, command_id: ref.command_id }, 'command expiry failed; tried again on the next pass');
      }
    }
    return expired;
  };
  const sweep = () => (running ??= pass().finally(() => (running = null)));
  const timer = setInterval(() => void sweep(), deps.intervalMs ?? EXPIRY_SWEEP_MS);
  timer.unref();
  return {
    sweep,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
