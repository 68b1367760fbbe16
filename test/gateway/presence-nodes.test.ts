/**
 * Presence's rule across gateway nodes, on the in-memory store with stand-in connections: the
 * later `DeviceConnected` in the log wins. Another node's login later than this node's record
 * closes the connection here and writes nothing; an earlier one changes nothing; one seen while
 * this node's own record is being written is decided once that write has landed or failed.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';
import type { DeviceClaim, DeviceConnected, DomainEvent } from '../../core/events.js';
import { InMemoryEventStore } from '../../core/event-store/memory.js';
import type { EventStore, EventToAppend, RecordedEvent } from '../../core/event-store/port.js';
import { silentLogger } from '../../core/logger.js';
import { streams } from '../../core/streams.js';
import { TokenBucket } from '../../core/token-bucket.js';
import { KeyedThrottle } from '../../gateway/keyed-throttle.js';
import { DevicePresence, type PresenceConnection } from '../../gateway/presence.js';
import { newStats } from '../../gateway/stats.js';
import { until } from '../support/wait.js';

const claim: DeviceClaim = { device_id: 'dev_1', customer_id: 'cus_1', imei: '356938035643809', model: 'FMB920', terminal_id: null, claimed_at: 0 };

function presenceOn(store: EventStore) {
  const stats = newStats();
  const presence = new DevicePresence({
    store,
    clock: systemClock,
    log: silentLogger,
    stats,
    bucket: new TokenBucket(1_000, 100),
    replacements: new KeyedThrottle(60_000, new TokenBucket(50, 1)),
    graceMs: 0,
    nodeId: 'node-a',
  });
  return { presence, stats };
}

function connection(id: string): PresenceConnection & { closedAs: string | null } {
  return {
    claim,
    connectionId: id,
    protocolName: 'teltonika',
    remoteAddress: '10.0.0.1:5000',
    connectedAt: 1_000,
    closedAs: null,
    close(reason) {
      this.closedAs = reason;
    },
  };
}

const loginOn = (node: string, connectionId: string): EventToAppend<DomainEvent> => ({
  id: randomUUID(),
  type: 'DeviceConnected',
  data: { device_id: 'dev_1', customer_id: 'cus_1', connection_id: connectionId, protocol: 'teltonika', remote_address: '10.0.0.2:6000', at: 2_000, gateway_node: node },
});

/** Appends another node's login and returns it as the follower hands it over. */
async function appendLogin(store: EventStore, node: string, connectionId: string): Promise<RecordedEvent<DeviceConnected>> {
  await store.appendToStream(streams.device('dev_1'), [loginOn(node, connectionId)]);
  const [last] = await store.readStream(streams.device('dev_1'), { direction: 'backwards', maxCount: 1 });
  return last as RecordedEvent<DeviceConnected>;
}

const deviceTypes = async (store: EventStore) => (await store.readStream(streams.device('dev_1'))).map((e) => e.type);

describe('presence across gateway nodes', () => {
  it('keeps a device another node logged in earlier in the log, and lets go on a later login there', async () => {
    const store = new InMemoryEventStore();
    const { presence, stats } = presenceOn(store);
    const earlier = await appendLogin(store, 'node-b', 'b1');
    const mine = connection('a1');
    presence.connected(mine);
    await until(async () => (await deviceTypes(store)).length === 2, 'recorded by node A');

    presence.connectedInLog(earlier);
    // Its own record is handed over too, and changes nothing.
    presence.connectedInLog((await store.readStream(streams.device('dev_1')))[1] as RecordedEvent<DeviceConnected>);
    expect(mine.closedAs).toBeNull();

    presence.connectedInLog(await appendLogin(store, 'node-b', 'b2'));
    expect(mine.closedAs).toBe('replaced');
    expect(stats.connectionsReplaced).toBe(1);
    presence.closed(mine, 'replaced', 3_000);
    // Stopping writes what the node still owes: nothing for a device online elsewhere.
    await presence.flushAll();
    expect(await deviceTypes(store)).toEqual(['DeviceConnected', 'DeviceConnected', 'DeviceConnected']);
  });

  it('decides on a login elsewhere seen during its own write once that write lands or fails', async () => {
    for (const outcome of ['lands', 'fails'] as const) {
      const memory = new InMemoryEventStore();
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      const store: EventStore = Object.create(memory) as EventStore;
      store.appendToStream = async (stream, events, options) => {
        await held;
        if (outcome === 'fails') throw new Error('disk full');
        return memory.appendToStream(stream, events, options);
      };
      const { presence, stats } = presenceOn(store);
      const mine = connection('a1');
      presence.connected(mine);
      // Another node's login reaches the log before this node's record, which is still being written.
      const elsewhere = await appendLogin(memory, 'node-b', 'b1');
      presence.connectedInLog(elsewhere);
      expect(mine.closedAs).toBeNull();
      release();
      if (outcome === 'lands') {
        // This node's record is the later one: it keeps the device (node B lets go when it sees it).
        await until(async () => (await deviceTypes(memory)).length === 2, 'recorded by node A');
        expect(mine.closedAs).toBeNull();
        expect(stats.connectionsReplaced).toBe(0);
      } else {
        await until(() => mine.closedAs !== null, 'let go');
        expect(mine.closedAs).toBe('replaced');
        expect(stats.connectionsReplaced).toBe(1);
      }
      await presence.flushAll();
    }
  });
});
