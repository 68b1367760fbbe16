import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { EsdbEventStore } from '../../core/event-store/esdb.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { eventStoreContract } from './event-store.contract.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// One file for the whole suite: the contract uses unique stream names, as on a shared server.
eventStoreContract('sqlite', async () => new SqliteEventStore(join(dir, 'events.sqlite')));

const esdbUrl = process.env.FLEET_ESDB_URL;
// The EventStoreDB run happens when a server is configured (README: "Running on EventStoreDB").
if (esdbUrl) eventStoreContract('eventstoredb', async () => new EsdbEventStore(esdbUrl));

describe('sqlite group commit', () => {
  it('writes appends issued together in one transaction and keeps them durable across reopen', async () => {
    const path = join(dir, 'group.sqlite');
    const store = new SqliteEventStore(path);
    const appends = Array.from({ length: 500 }, (_, i) =>
      store.appendToStream(`telemetry-dev${i}`, [
        {
          id: crypto.randomUUID(),
          type: 'CustomerCreated',
          data: { customer_id: `c${i}`, name: `n${i}`, plan: 'pro', created_at: i },
        },
      ]),
    );
    const results = await Promise.all(appends);
    expect(new Set(results.map((r) => r.position.commit)).size).toBe(500);
    await store.close();
    const reopened = new SqliteEventStore(path);
    const all = await reopened.readAll({ maxCount: 1000 });
    expect(all).toHaveLength(500);
    await reopened.close();
  });
});

describe('sqlite log written before streams had ids', () => {
  it('is migrated on open: every event keeps its position, stream, revision and data, and appends continue the revisions', async () => {
    const path = join(dir, 'named-streams.sqlite');
    const old = new Database(path);
    old.exec(`CREATE TABLE events (
      position INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, stream TEXT NOT NULL, revision INTEGER NOT NULL,
      type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, created INTEGER NOT NULL, UNIQUE (stream, revision))`);
    const insert = old.prepare('INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    const rows: Array<[number, string, string, number]> = [
      [1, 'a1', 'tenant-cus_1', 0],
      [2, 'b1', 'device-dev_1', 0],
      [3, 'a2', 'tenant-cus_1', 1],
    ];
    for (const [position, id, stream, revision] of rows) {
      insert.run(position, id, stream, revision, 'CustomerCreated', JSON.stringify({ customer_id: id }), '{}', position * 10);
    }
    old.close();

    const store = new SqliteEventStore(path);
    const all = await store.readAll();
    expect(all.map((e) => [Number(e.position.commit), e.id, e.stream, Number(e.revision), e.created])).toEqual(
      rows.map(([position, id, stream, revision]) => [position, id, stream, revision, position * 10]),
    );
    expect(all[2]!.data).toEqual({ customer_id: 'a2' });
    const next = await store.appendToStream(
      'tenant-cus_1',
      [{ id: 'a3', type: 'CustomerCreated', data: { customer_id: 'a3', name: 'n', plan: 'pro', created_at: 0 } }],
      { expectedRevision: 1n },
    );
    expect(next.nextExpectedRevision).toBe(2n);
    expect(next.position.commit).toBe(4n);
    expect((await store.readStream('tenant-cus_1')).map((e) => e.id)).toEqual(['a1', 'a2', 'a3']);
    await store.close();
  });
});
