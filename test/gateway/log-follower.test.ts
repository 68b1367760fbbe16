/**
 * The gateway's log follower on the in-memory store: it reads only the types it has handlers
 * for, from the log's end, and opens its subscription again after a failure, from the last
 * event it handed over, logging failures at most once per interval.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import type { DeviceConnected, DomainEvent } from '../../core/events.js';
import { InMemoryEventStore } from '../../core/event-store/memory.js';
import type { EventStore, EventToAppend, RecordedEvent, SubscribeToAllOptions, Subscription } from '../../core/event-store/port.js';
import { LogFollower } from '../../gateway/log-follower.js';
import { capturingLogger } from '../support/platform-harness.js';
import { until } from '../support/wait.js';

const connected = (device: string, connection: string): EventToAppend<DomainEvent> => ({
  id: randomUUID(),
  type: 'DeviceConnected',
  data: { device_id: device, customer_id: 'cus_1', connection_id: connection, protocol: 'teltonika', remote_address: '10.0.0.1:5000', at: 1_000 },
});
const disconnected = (device: string, connection: string): EventToAppend<DomainEvent> => ({
  id: randomUUID(),
  type: 'DeviceDisconnected',
  data: { device_id: device, customer_id: 'cus_1', connection_id: connection, reason: 'closed', last_seen_at: 1_000, at: 2_000 },
});
const refused = (device: string): EventToAppend<DomainEvent> => ({
  id: randomUUID(),
  type: 'DeviceLoginRefused',
  data: { device_id: device, customer_id: 'cus_1', reason: 'protocol_mismatch', protocol: 'gt06', bound_protocol: 'teltonika', remote_address: 'x', at: 1_500, count: 1 },
});

/**
 * The store with its subscriptions watched: the options each was opened with, how many were
 * closed, and `fail(n)` to make the next subscription throw after handing over `n` events.
 */
function watched(store: EventStore) {
  const opened: SubscribeToAllOptions[] = [];
  let closed = 0;
  let failAfter: number | null = null;
  const wrapped: EventStore = Object.create(store) as EventStore;
  wrapped.subscribeToAll = (options = {}) => {
    opened.push(options);
    const inner = store.subscribeToAll(options);
    const limit = failAfter;
    failAfter = null;
    const sub: Subscription = {
      close: async () => {
        closed += 1;
        await inner.close();
      },
      async *[Symbol.asyncIterator]() {
        let handed = 0;
        if (limit === 0) throw new Error('connection to the store lost');
        for await (const e of inner) {
          yield e;
          if (limit !== null && ++handed >= limit) throw new Error('connection to the store lost');
        }
      },
    };
    return sub;
  };
  return { store: wrapped, opened, closed: () => closed, fail: (n: number) => void (failAfter = n) };
}

let follower: LogFollower | null = null;
afterEach(async () => {
  await follower?.stop();
  follower = null;
});

describe('the gateway log follower', () => {
  it('hands the events of the types it follows to their handlers, from the log end on', async () => {
    const memory = new InMemoryEventStore();
    await memory.appendToStream('device-dev_old', [connected('dev_old', 'c0')]);
    const w = watched(memory);
    const seen: string[] = [];
    follower = new LogFollower({ store: w.store, clock: new ManualClock(0), log: capturingLogger().log });
    follower.on('DeviceConnected', (e) => seen.push(`connected ${e.data.device_id} ${e.data.connection_id}`));
    follower.on('DeviceDisconnected', (e) => seen.push(`disconnected ${e.data.device_id} ${e.data.connection_id}`));
    follower.start();
    await until(() => w.opened.length === 1, 'subscribed');
    expect(w.opened[0]).toEqual({ after: 'end', onlyTypes: ['DeviceConnected', 'DeviceDisconnected'] });

    await memory.appendToStream('device-dev_1', [connected('dev_1', 'c1'), refused('dev_1'), disconnected('dev_1', 'c1')]);
    await until(() => seen.length === 2, 'both events handed over');
    expect(seen).toEqual(['connected dev_1 c1', 'disconnected dev_1 c1']);
  });

  it('opens its subscription again after a failure, from the last event it handed over', async () => {
    const memory = new InMemoryEventStore();
    const w = watched(memory);
    const captured = capturingLogger();
    const seen: Array<RecordedEvent<DeviceConnected>> = [];
    follower = new LogFollower({ store: w.store, clock: new ManualClock(0), log: captured.log, retryMs: 1 });
    follower.on('DeviceConnected', (e) => seen.push(e));
    w.fail(1);
    follower.start();
    await until(() => w.opened.length === 1, 'subscribed');

    await memory.appendToStream('device-dev_1', [connected('dev_1', 'c1')]);
    await memory.appendToStream('device-dev_2', [connected('dev_2', 'c2')]);
    await until(() => seen.length === 2, 'the event after the failure handed over');
    expect(seen.map((e) => e.data.device_id)).toEqual(['dev_1', 'dev_2']);
    expect(w.opened).toHaveLength(2);
    expect(w.opened[1]!.after).toEqual(seen[0]!.position);
    expect(w.closed()).toBe(1);
    const failures = captured.lines.filter((l) => l.includes('log follower: subscription failed'));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toContain('connection to the store lost');

    // Nothing is handed over twice, and a later event still arrives.
    await memory.appendToStream('device-dev_3', [connected('dev_3', 'c3')]);
    await until(() => seen.length === 3, 'a later event');
    expect(seen.map((e) => e.data.device_id)).toEqual(['dev_1', 'dev_2', 'dev_3']);
  });

  it('logs a failing subscription at most once per interval, saying how many failures it did not log', async () => {
    const memory = new InMemoryEventStore();
    const clock = new ManualClock(0);
    const captured = capturingLogger();
    const failing: EventStore = Object.create(memory) as EventStore;
    let attempts = 0;
    failing.subscribeToAll = () => {
      attempts += 1;
      throw new Error('store unreachable');
    };
    follower = new LogFollower({ store: failing, clock, log: captured.log, retryMs: 1, maxRetryMs: 2 });
    follower.on('DeviceConnected', () => undefined);
    follower.start();
    await until(() => attempts >= 5, 'several attempts');
    const lines = () => captured.lines.filter((l) => l.includes('log follower: subscription failed'));
    expect(lines()).toHaveLength(1);

    clock.advance(10_000);
    const before = attempts;
    await until(() => lines().length === 2, 'a line once the interval has passed');
    const second = JSON.parse(lines()[1]!) as { notLoggedSinceLastLine: number };
    expect(second.notLoggedSinceLastLine).toBeGreaterThanOrEqual(before - 1);
  });

  it('stops while subscribed and while waiting to subscribe again', async () => {
    const memory = new InMemoryEventStore();
    const w = watched(memory);
    const seen: string[] = [];
    follower = new LogFollower({ store: w.store, clock: new ManualClock(0), log: capturingLogger().log });
    follower.on('DeviceConnected', (e) => seen.push(e.data.device_id));
    follower.start();
    await until(() => w.opened.length === 1, 'subscribed');
    await follower.stop();
    expect(w.closed()).toBeGreaterThan(0);
    await memory.appendToStream('device-dev_1', [connected('dev_1', 'c1')]);

    // A long backoff: stop ends it rather than waiting it out.
    const again = watched(memory);
    again.fail(0);
    follower = new LogFollower({ store: again.store, clock: new ManualClock(0), log: capturingLogger().log, retryMs: 3_600_000 });
    follower.on('DeviceConnected', (e) => seen.push(e.data.device_id));
    follower.start();
    await until(() => again.closed() === 1, 'the failed subscription closed');
    await follower.stop();
    expect(again.opened).toHaveLength(1);
    expect(seen).toEqual([]);
  });
});
