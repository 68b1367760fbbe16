/**
 * The PostgreSQL event store's tables, created or migrated at open in one transaction that holds
 * an advisory lock (postgres.ts). Each statement is idempotent, so a node may run them every start.
 */
export const POSTGRES_SCHEMA: readonly string[] = [
  // Data and metadata as text, as SQLite keeps them: readers get back the JSON the appender wrote.
  // transaction_id lets a later multi-writer scheme order by transaction without a migration of rows.
  `CREATE TABLE IF NOT EXISTS fleet_events (
     position bigserial PRIMARY KEY,
     transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
     event_id text NOT NULL,
     stream text NOT NULL,
     revision bigint NOT NULL,
     type text NOT NULL,
     data text NOT NULL,
     metadata text NOT NULL,
     created bigint NOT NULL
   )`,
  // An event id is stored once in the whole log.
  'CREATE UNIQUE INDEX IF NOT EXISTS fleet_events_event_id ON fleet_events (event_id)',
  'CREATE UNIQUE INDEX IF NOT EXISTS fleet_events_stream_revision ON fleet_events (stream, revision)',
];

/** The object the schema creates last: present, the whole schema is (it is created in one transaction). */
export const POSTGRES_SCHEMA_LAST = 'fleet_events_stream_revision';
