/**
 * The device directory over a real SQLite store: what a login reads, and the protocol
 * binding two gateway nodes agree on when they bind the same device at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';
import { registerDevice } from '../../core/commands/devices.js';
import type { EventStore, ReadStreamOptions } from '../../core/event-store/port.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { imeiFrom } from '../../core/imei.js';
import { randomUuid } from '../../core/ids.js';
import { streams } from '../../core/streams.js';
import { DeviceDirectory } from '../../gateway/directory.js';

const IMEI = imeiFrom('35209807222222');
let dir: string;
let store: SqliteEventStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-directory-'));
  store = new SqliteEventStore(join(dir, 'events.sqlite'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The store, with every stream read it answers written down. */
function countingReads(inner: EventStore): { store: EventStore; reads: string[] } {
  const reads: string[] = [];
  const counted: EventStore = {
    appendToStream: (s, e, o) => inner.appendToStream(s, e, o),
    readStream: (s: string, o?: ReadStreamOptions) => {
      reads.push(s);
      return inner.readStream(s, o);
    },
    readAll: (o) => inner.readAll(o),
    subscribeToAll: (o) => inner.subscribeToAll(o),
    close: () => inner.close(),
  };
  return { store: counted, reads };
}

async function register(protocol: 'teltonika' | null = null) {
  await registerDevice(store, systemClock, { customer_id: 'cus_test', imei: IMEI, model: 'FMB920', protocol });
  const directory = new DeviceDirectory(store, systemClock);
  const claim = await directory.resolve({ imei: IMEI });
  if (!claim) throw new Error('registered device not resolved');
  return claim;
}

const bindings = async (deviceId: string) =>
  (await store.readStream(streams.device(deviceId))).filter((e) => e.type === 'DeviceProtocolBound').map((e) => e.data.protocol);

describe('device directory', () => {
  it("binds a device at its first login from what resolving it read: the claim and the device stream's first page, no third read", async () => {
    const claim = await register();
    const { store: counted, reads } = countingReads(store);
    const directory = new DeviceDirectory(counted, systemClock);
    expect(await directory.resolve({ imei: IMEI })).toEqual(claim);
    expect(await directory.bindProtocol(claim, 'teltonika', Date.now())).toBe('teltonika');
    expect(reads).toEqual([streams.imei(IMEI), streams.device(claim.device_id)]);
    expect(await bindings(claim.device_id)).toEqual(['teltonika']);

    // Later logins on this node read nothing; another node (or a restart) learns the binding from the same first page.
    expect(await directory.bindProtocol(claim, 'gt06', Date.now())).toBe('teltonika');
    const other = countingReads(store);
    const restarted = new DeviceDirectory(other.store, systemClock);
    expect(await restarted.resolve({ imei: IMEI })).toEqual(claim);
    expect(await restarted.bindProtocol(claim, 'gt06', Date.now())).toBe('teltonika');
    expect(other.reads).toEqual([streams.imei(IMEI), streams.device(claim.device_id)]);
    expect(await bindings(claim.device_id)).toEqual(['teltonika']);
  });

  it('keeps the protocol of the registration without reading or appending', async () => {
    const claim = await register('teltonika');
    const { store: counted, reads } = countingReads(store);
    expect(await new DeviceDirectory(counted, systemClock).bindProtocol(claim, 'gt06', Date.now())).toBe('teltonika');
    expect(reads).toEqual([]);
    expect(await bindings(claim.device_id)).toEqual([]);
  });

  it('lets the first binding in the stream win when the stream grew after the login read it', async () => {
    const claim = await register();
    const a = new DeviceDirectory(store, systemClock);
    const b = new DeviceDirectory(store, systemClock);
    // Both nodes resolve the unbound device; then node B binds it first.
    await a.resolve({ imei: IMEI });
    await b.resolve({ imei: IMEI });
    expect(await b.bindProtocol(claim, 'gt06', Date.now())).toBe('gt06');
    expect(await a.bindProtocol(claim, 'teltonika', Date.now())).toBe('gt06');
    expect(await bindings(claim.device_id)).toEqual(['gt06']);
  });

  it('binds when the stream grew with something else than a binding since the login read it', async () => {
    const claim = await register();
    const directory = new DeviceDirectory(store, systemClock);
    await directory.resolve({ imei: IMEI });
    await store.appendToStream(streams.device(claim.device_id), [
      { id: randomUuid(), type: 'TerminalAuthCodeIssued', data: { device_id: claim.device_id, customer_id: claim.customer_id, auth_code_sha256: '00', issued_at: 1 } },
    ]);
    expect(await directory.bindProtocol(claim, 'teltonika', Date.now())).toBe('teltonika');
    expect(await bindings(claim.device_id)).toEqual(['teltonika']);
  });

  it('agrees on one binding when two nodes bind the same device at the same moment', async () => {
    const claim = await register();
    const nodes = [new DeviceDirectory(store, systemClock), new DeviceDirectory(store, systemClock)];
    await Promise.all(nodes.map((n) => n.resolve({ imei: IMEI })));
    const [x, y] = await Promise.all([nodes[0]!.bindProtocol(claim, 'teltonika', Date.now()), nodes[1]!.bindProtocol(claim, 'gt06', Date.now())]);
    const stored = await bindings(claim.device_id);
    expect(stored.length).toBeGreaterThanOrEqual(1);
    expect(x).toBe(stored[0]);
    expect(y).toBe(stored[0]);
  });
});
