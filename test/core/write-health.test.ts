/**
 * The store's write health (core/event-store/write-health.ts) on a hand-moved clock: which
 * outcomes make the store unwritable and writable again, when it probes, and that a run of
 * failures is logged as one line with a count per interval, never one line per failure.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { countAppends } from '../../core/event-store/counting.js';
import { WrongExpectedRevisionError, type EventStore } from '../../core/event-store/port.js';
import { StoreWriteError, StoreWriteHealth, appendFailureLevel } from '../../core/event-store/write-health.js';
import { capturingLogger } from '../support/platform-harness.js';

/** A store whose appends and probes succeed or fail with `failing`'s code, as the test says. */
function switchableStore() {
  const state: { failing: string | null; probes: number } = { failing: null, probes: 0 };
  const outcome = () => (state.failing ? Promise.reject(new StoreWriteError(state.failing, `write failed: ${state.failing}`)) : Promise.resolve());
  const store: EventStore = {
    appendToStream: () => outcome().then(() => ({ nextExpectedRevision: 0n, position: { commit: 1n, prepare: 1n } })),
    readStream: () => Promise.resolve([]),
    readAll: () => Promise.resolve([]),
    subscribeToAll: () => {
      throw new Error('not used');
    },
    probeWrite: () => {
      state.probes += 1;
      return outcome();
    },
    close: () => Promise.resolve(),
  };
  return { store, state };
}

function setUp() {
  const clock = new ManualClock(1_000_000);
  const { store: raw, state } = switchableStore();
  const { store, counts } = countAppends(raw, clock);
  const { log, lines } = capturingLogger('debug');
  const health = new StoreWriteHealth({ clock, log, sources: () => [counts], probe: () => store.probeWrite!() });
  const append = () => store.appendToStream('telemetry-dev_1', []).catch(() => {});
  const messages = () => lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
  return { clock, state, store, counts, health, append, messages };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('StoreWriteHealth', () => {
  it('logs a run of failures as one line with their count per interval, not one per failure', async () => {
    const { clock, state, health, append, messages } = setUp();
    state.failing = 'SQLITE_FULL';
    for (let i = 0; i < 1234; i++) {
      await append();
      if (i % 100 === 0) {
        clock.advance(50);
        health.tick();
      }
    }
    // The turn to unwritable is said at once; the failures themselves wait for the interval's line.
    expect(messages()).toEqual(['event store cannot write (SQLITE_FULL): /readyz answers 503 until a write succeeds; probing once no append has answered for 2 s']);
    clock.set(1_000_000 + 10_000);
    health.tick();
    expect(messages().slice(1)).toEqual(['store appends failing: 1,234 in the last 10 s: SQLITE_FULL']);
    // Several codes in one interval are each counted; an interval without failures writes nothing.
    state.failing = 'SQLITE_IOERR_WRITE';
    for (let i = 0; i < 3; i++) await append();
    state.failing = 'SQLITE_FULL';
    for (let i = 0; i < 2; i++) await append();
    clock.advance(10_000);
    health.tick();
    clock.advance(10_000);
    health.tick();
    expect(messages().slice(2).filter((m) => m.startsWith('store appends failing'))).toEqual([
      'store appends failing: 5 in the last 10 s: SQLITE_IOERR_WRITE 3, SQLITE_FULL 2',
    ]);
  });

  it('is unwritable from a failed append until a commit, and ignores conflicts', async () => {
    const { clock, state, store, health, append, messages } = setUp();
    expect(health.status()).toEqual({ writable: true, code: null, since: null });
    await store.appendToStream('s', []).then(
      () => {},
      () => {},
    );
    state.failing = 'SQLITE_READONLY';
    await append();
    expect(health.status()).toEqual({ writable: false, code: 'SQLITE_READONLY', since: clock.now() });
    state.failing = null;
    clock.advance(3_000);
    await append();
    expect(health.status().writable).toBe(true);
    expect(messages().at(-1)).toBe('event store writes again after 3.0 s (SQLITE_READONLY; 0 more appends failed meanwhile): /readyz is ready again');

    // A conflict is the store writing as asked: it changes nothing, and the caller's own line keeps its level.
    const conflict = new WrongExpectedRevisionError('s', 'no_stream', 0n);
    const { store: conflicting, counts } = countAppends({ ...store, appendToStream: () => Promise.reject(conflict) }, clock);
    await conflicting.appendToStream('s', []).catch(() => {});
    expect(counts).toMatchObject({ failures: 1, failuresByCode: {}, lastWrite: null });
    expect(appendFailureLevel(conflict, 'error')).toBe('error');
    expect(appendFailureLevel(new StoreWriteError('SQLITE_FULL', 'full'), 'error')).toBe('debug');
  });

  it('probes while unwritable once appends are quiet for the probe interval, and turns writable when a probe commits', async () => {
    const { clock, state, health, append } = setUp();
    const tickAfter = async (ms: number) => {
      clock.advance(ms);
      health.tick();
      await settle();
    };
    await tickAfter(5_000);
    expect(state.probes).toBe(0); // writable: nothing to probe
    state.failing = 'SQLITE_FULL';
    await append();
    await tickAfter(0);
    expect(state.probes).toBe(0); // an append has just told
    await tickAfter(2_000);
    expect(state.probes).toBe(1);
    await tickAfter(1_000);
    expect(state.probes).toBe(1);
    await tickAfter(1_000);
    expect(state.probes).toBe(2);
    // Appends that keep failing are the test while they come: no probe beside them.
    for (let i = 0; i < 4; i++) {
      await append();
      await tickAfter(1_000);
    }
    expect(state.probes).toBe(2);
    // A failed probe counts no append and leaves the store unwritable; once there is room, the next probe tells.
    expect(health.status().writable).toBe(false);
    state.failing = null;
    await tickAfter(2_000);
    expect(state.probes).toBe(3);
    expect(health.status()).toEqual({ writable: true, code: null, since: null });
  });

  it('takes the latest outcome of several handles, and an older one that arrives late changes nothing', () => {
    const clock = new ManualClock(5_000);
    const platform = { appends: 0, events: 0, failures: 0, failuresByCode: {}, lastWrite: { at: 4_000, code: null } };
    const gateway = { appends: 0, events: 0, failures: 1, failuresByCode: { SQLITE_FULL: 1 }, lastWrite: { at: 4_500, code: 'SQLITE_FULL' } };
    const health = new StoreWriteHealth({ clock, log: capturingLogger().log, sources: () => [platform, gateway], probe: null });
    expect(health.status()).toMatchObject({ writable: false, code: 'SQLITE_FULL', since: 4_500 });
    platform.lastWrite = { at: 4_200, code: null };
    expect(health.status().writable).toBe(false);
    platform.lastWrite = { at: 4_600, code: null };
    expect(health.status().writable).toBe(true);
  });
});
