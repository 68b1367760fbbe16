/**
 * A fresh store and a hand-moved clock for command tests: no HTTP, no projections.
 * The store is held in memory (no files, no writer thread); FLEET_COMMAND_STORE=sqlite
 * runs the same tests on the embedded SQLite store, whose writer needs dist/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { CommandRejected } from '../../core/commands/rejection.js';
import { InMemoryEventStore } from '../../core/event-store/memory.js';
import type { EventStore } from '../../core/event-store/port.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';

export const T0 = Date.UTC(2026, 2, 1, 8, 0, 0);

/** Opens a store for one test; it is closed (and its files removed) after the test. */
export function useCommandStore(): () => { store: EventStore; clock: ManualClock } {
  const opened: Array<{ store: EventStore; dir: string | null }> = [];
  afterEach(async () => {
    for (const { store, dir } of opened.splice(0)) {
      await store.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });
  return () => {
    const clock = new ManualClock(T0);
    if (process.env.FLEET_COMMAND_STORE !== 'sqlite') {
      const store = new InMemoryEventStore({ clock });
      opened.push({ store, dir: null });
      return { store, clock };
    }
    const dir = mkdtempSync(join(tmpdir(), 'fleet-commands-'));
    const store = new SqliteEventStore(join(dir, 'events.sqlite'), { clock, synchronous: 'OFF' });
    opened.push({ store, dir });
    return { store, clock };
  };
}

/** The refusal a command's promise rejects with (any other outcome fails the test). */
export async function rejection(promise: Promise<unknown>): Promise<CommandRejected> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof CommandRejected) return err;
    throw err;
  }
  throw new Error('expected the command to be refused');
}
