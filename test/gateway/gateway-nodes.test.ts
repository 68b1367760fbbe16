/**
 * Two gateway nodes on one event store, over real sockets: a device that logs in on node B while
 * node A holds it is let go by A (its socket closed by A, counted as a replacement, no disconnect
 * written), both connections' records are stored, and the device stream says online with B's
 * connection. On the in-memory store (one handle shared) and on a real PostgreSQL server (a
 * handle per node, as separate processes have).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceConnected } from '../../core/events.js';
import { imeiFrom } from '../../core/imei.js';
import { InMemoryEventStore } from '../../core/event-store/memory.js';
import type { EventStore, RecordedEvent } from '../../core/event-store/port.js';
import { openPostgresEventStore } from '../../core/event-store/postgres.js';
import { streams } from '../../core/streams.js';
import { Gateway } from '../../gateway/server.js';
import { evolveDevice, type DeviceRow } from '../../projections/devices/evolve.js';
import { encoders } from '../simulator/run.js';
import { Route } from '../simulator/route.js';
import type { EncodeContext } from '../simulator/encoders/types.js';
import { login, sendPoints } from '../support/device-login.js';
import { registerInStore, testGatewayOptions } from '../support/gateway-harness.js';
import { startPostgresServer, type PostgresServer } from '../support/postgres-server.js';
import { capturingLogger } from '../support/platform-harness.js';
import { TcpClient } from '../support/tcp-client.js';
import { until } from '../support/wait.js';

const IMEI = imeiFrom('35209807333333');
const ctx: EncodeContext = { imei: IMEI, terminalId: IMEI.slice(3), serial: 1 };
const encoder = encoders.teltonika;
const route = new Route({ seed: 7, startLat: 56.95, startLng: 24.1, startTime: Date.now() - 3_600_000 });

let pg: PostgresServer | null = null;
const open: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  pg = await startPostgresServer();
  await pg.createDatabase('fleet_nodes');
}, 120_000);
afterAll(async () => pg?.stop(), 60_000);
afterEach(async () => {
  // Gateways first (their last writes need the stores), then the stores.
  for (const c of open.splice(0).reverse()) await c.close();
});

/** Each node's handle on the store: one shared in memory, one per node on PostgreSQL. */
const stores: Record<'memory' | 'postgres', () => Promise<[EventStore, EventStore]>> = {
  memory: async () => {
    const shared = new InMemoryEventStore();
    return [shared, shared];
  },
  postgres: async () => [await openPostgresEventStore(pg!.url('fleet_nodes')), await openPostgresEventStore(pg!.url('fleet_nodes'))],
};

async function startNode(store: EventStore, nodeId: string): Promise<{ gateway: Gateway; port: number }> {
  const gateway = new Gateway(testGatewayOptions(store, { nodeId }));
  const ports = await gateway.start();
  open.push({ close: () => gateway.stop() });
  return { gateway, port: ports.teltonika };
}

/** The device's read-model row, folded from its stream as the devices projection does. */
async function deviceRow(store: EventStore, deviceId: string): Promise<DeviceRow | null> {
  let row: DeviceRow | null = null;
  for (const e of await store.readStream(streams.device(deviceId))) row = evolveDevice(row, e);
  return row;
}

const connectedBy = async (store: EventStore, deviceId: string, node: string) =>
  ((await store.readStream(streams.device(deviceId))) as Array<RecordedEvent<DeviceConnected>>).filter(
    (e) => e.type === 'DeviceConnected' && e.data.gateway_node === node,
  );

describe.each(['memory', 'postgres'] as const)('two gateway nodes on one %s store', (kind) => {
  it('a device that logs in on node B is let go by node A, and is online with B', async () => {
    const [storeA, storeB] = await stores[kind]();
    open.push(storeA, ...(storeB === storeA ? [] : [storeB]));
    const claim = await registerInStore(storeA, IMEI);
    const a = await startNode(storeA, 'node-a');
    const b = await startNode(storeB, 'node-b');

    const onA = await TcpClient.open(a.port);
    await login(onA, encoder, ctx);
    const fixOnA = route.next();
    const sentA = await sendPoints(onA, encoder, { ...ctx, serial: 2 }, [fixOnA]);
    expect(encoder.isAck(sentA.reply, sentA.frame, 1)).toBe(true);
    await until(async () => (await connectedBy(storeB, claim.device_id, 'node-a')).length === 1, 'online through node A');

    const onB = await TcpClient.open(b.port);
    await login(onB, encoder, { ...ctx, serial: 3 });
    // Node A closes its socket once it has seen B's record of the login in the log.
    await onA.closedPromise;
    const fixOnB = route.next();
    const sentB = await sendPoints(onB, encoder, { ...ctx, serial: 4 }, [fixOnB]);
    expect(encoder.isAck(sentB.reply, sentB.frame, 1)).toBe(true);
    expect(a.gateway.stats.connectionsReplaced).toBe(1);
    expect(b.gateway.stats.connectionsReplaced).toBe(0);

    // Node A stopping writes whatever it still owes: nothing of this device, which is online on B.
    await a.gateway.stop();
    const [fromB] = await connectedBy(storeA, claim.device_id, 'node-b');
    expect(fromB).toBeDefined();
    const device = await storeA.readStream(streams.device(claim.device_id));
    expect(device.filter((e) => e.type === 'DeviceDisconnected')).toEqual([]);
    expect(device.filter((e) => e.type === 'DeviceConnectionReplaced')).toEqual([]);
    expect(await deviceRow(storeA, claim.device_id)).toMatchObject({ status: 'online', connection_id: fromB!.data.connection_id });

    const telemetry = await storeA.readStream(streams.telemetry(claim.device_id));
    const fixes = telemetry.filter((e) => e.type === 'PositionRecorded').map((e) => (e.data as { fix_time: number }).fix_time);
    expect(fixes).toEqual([fixOnA.fixTime, fixOnB.fixTime]);

    // B's connection ending takes the device offline: its disconnect pairs with B's connection.
    onB.close();
    await until(async () => (await deviceRow(storeA, claim.device_id))?.status === 'offline', 'offline once B lets go');
  });
});

describe('a gateway node', () => {
  it('gets a random id of its own at each start and logs it', () => {
    const captured = capturingLogger();
    const store = new InMemoryEventStore();
    const first = new Gateway(testGatewayOptions(store, { log: captured.log }));
    const second = new Gateway(testGatewayOptions(store, { log: captured.log }));
    expect(first.nodeId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(second.nodeId).not.toBe(first.nodeId);
    const logged = captured.lines.map((l) => JSON.parse(l) as { gatewayNode?: string }).map((l) => l.gatewayNode);
    expect(logged).toEqual([first.nodeId, second.nodeId]);
  });
});
