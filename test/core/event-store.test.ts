import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
