/** A real gateway on ephemeral ports over a temporary SQLite store. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../core/clock.js';
import { registerDevice } from '../../core/commands/devices.js';
import type { DeviceClaim, DomainEvent } from '../../core/events.js';
import type { EventStore, RecordedEvent } from '../../core/event-store/port.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { silentLogger } from '../../core/logger.js';
import { streams } from '../../core/streams.js';
import type { ProtocolName } from '../../gateway/protocol.js';
import { protocols } from '../../gateway/protocols/index.js';
import { Gateway, type GatewayOptions } from '../../gateway/server.js';

export interface GatewayHarness {
  gateway: Gateway;
  store: SqliteEventStore;
  ports: Record<ProtocolName, number>;
  /** Registers a device straight in the store (as POST /v1/devices does). */
  register(imei: string, opts?: { terminalId?: string; model?: string; customerId?: string; protocol?: ProtocolName }): Promise<DeviceClaim>;
  events(type?: DomainEvent['type']): Promise<RecordedEvent[]>;
  close(): Promise<void>;
}

/** A gateway's options as the tests run it: every protocol on a free port of 127.0.0.1, generous caps. */
export function testGatewayOptions(store: EventStore, overrides: Partial<GatewayOptions> = {}): GatewayOptions {
  return {
    store,
    clock: systemClock,
    log: silentLogger,
    host: '127.0.0.1',
    listeners: [
      { protocol: protocols.teltonika, port: 0 },
      { protocol: protocols.gt06, port: 0 },
      { protocol: protocols.jt808, port: 0 },
    ],
    offlineAfterS: 600,
    loginTimeoutS: 60,
    maxConnections: 1000,
    maxConnectionsPerAddress: 1000,
    maxQueuedFrames: 64,
    // Disconnects recorded at once unless a test looks at quick redials.
    reconnectGraceMs: 0,
    ...overrides,
  };
}

/** Registers a device straight in the store (as POST /v1/devices does); resolves with its IMEI claim. */
export async function registerInStore(
  store: EventStore,
  imei: string,
  opts: { terminalId?: string; model?: string; customerId?: string; protocol?: ProtocolName } = {},
): Promise<DeviceClaim> {
  const { device_id } = await registerDevice(store, systemClock, {
    customer_id: opts.customerId ?? 'cus_test',
    imei,
    model: opts.model ?? 'test-unit',
    terminal_id: opts.terminalId ?? null,
    protocol: opts.protocol ?? null,
  });
  const [claimed] = await store.readStream(streams.imei(imei), { direction: 'backwards', maxCount: 1 });
  if (claimed?.type !== 'ImeiClaimed' || claimed.data.device_id !== device_id) throw new Error(`no claim of ${imei} after registration`);
  return claimed.data;
}

export async function startGatewayHarness(
  overrides: Partial<GatewayOptions> & { wrapStore?: (s: SqliteEventStore) => EventStore } = {},
): Promise<GatewayHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-gw-'));
  const store = new SqliteEventStore(join(dir, 'events.sqlite'));
  const { wrapStore, ...options } = overrides;
  const gateway = new Gateway(testGatewayOptions(wrapStore ? wrapStore(store) : store, options));
  const ports = await gateway.start();
  return {
    gateway,
    store,
    ports,
    register: (imei, opts = {}) => registerInStore(store, imei, opts),
    async events(type) {
      const all: RecordedEvent[] = [];
      for (;;) {
        const last = all[all.length - 1];
        const batch = await store.readAll({ ...(last ? { after: last.position } : {}), maxCount: 1000 });
        if (batch.length === 0) break;
        all.push(...batch);
      }
      return type ? all.filter((e) => e.type === type) : all;
    },
    async close() {
      await gateway.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
