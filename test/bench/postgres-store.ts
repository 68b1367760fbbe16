/**
 * The PostgreSQL server of a bench run with `--store postgres`: fsync on, since its acks are
 * compared with the durable reference's; a fresh database for each platform process.
 */
import pg from 'pg';
import { startPostgresServer, type PostgresServer } from '../support/postgres-server.js';
import { processTreeCpuS } from './proc-usage.js';

export interface PostgresStore {
  server: PostgresServer;
  /** Creates a database no run used before and returns its postgres:// URL. */
  freshDatabase(): Promise<string>;
  stop(): Promise<void>;
}

export async function startBenchPostgres(prefix: string): Promise<PostgresStore> {
  const server = await startPostgresServer({ durable: true });
  let databases = 0;
  return {
    server,
    freshDatabase: async () => {
      const name = `${prefix}_${++databases}`;
      await server.createDatabase(name);
      return server.url(name);
    },
    stop: () => server.stop(),
  };
}

/** CPU seconds the server used so far: the postmaster and every backend, live or ended. */
export function postgresCpuS(store: PostgresStore): number {
  return processTreeCpuS(store.server.pid());
}

/** The log's head position, read on a connection of its own, opened at the first read. */
export function logHeadOf(url: string): { head: () => Promise<number>; close: () => Promise<void> } {
  let client: Promise<pg.Client> | null = null;
  return {
    head: async () => {
      client ??= (async () => {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        return c;
      })();
      const result = await (await client).query<{ head: string }>('SELECT coalesce(max(position), 0) AS head FROM fleet_events');
      return Number(result.rows[0]!.head);
    },
    close: async () => {
      if (client) await (await client).end();
    },
  };
}
