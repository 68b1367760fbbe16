/** Opens the store a `FLEET_STORE` URL names: `sqlite:PATH`, `esdb://...` or `postgres://...`. */
import type { Clock } from '../clock.js';
import type { EventStore } from './port.js';

export async function openEventStore(url: string, clock?: Clock): Promise<EventStore> {
  if (url.startsWith('sqlite:')) {
    const { SqliteEventStore } = await import('./sqlite.js');
    return new SqliteEventStore(url.slice('sqlite:'.length), clock ? { clock } : {});
  }
  if (url.startsWith('esdb://') || url.startsWith('esdb+discover://')) {
    const { EsdbEventStore } = await import('./esdb.js');
    return new EsdbEventStore(url);
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { openPostgresEventStore } = await import('./postgres.js');
    return openPostgresEventStore(url, clock ? { clock } : {});
  }
  throw new Error(`FLEET_STORE must start with sqlite:, esdb:// or postgres:// (got ${JSON.stringify(url)})`);
}
