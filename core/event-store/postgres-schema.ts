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
  // A whole group commit in one statement, so an append costs one round trip (postgres.ts).
  // Versioned by name: a changed body needs a new name, since the schema is only created when missing.
  // VOLATILE, so each statement after the lock sees what the previous holder committed.
  `CREATE OR REPLACE FUNCTION fleet_append_v1(
     p_lock bigint,
     p_channel text,
     p_created bigint,
     p_streams text[],      -- the group's distinct streams
     p_stream_of int[],     -- per append: its stream's index in p_streams
     p_kind int[],          -- per append: 0 any, 1 no_stream, 2 stream_exists, 3 the revision in p_revision
     p_revision bigint[],
     p_count int[],         -- per append: how many of the events below are its own
     p_id text[], p_type text[], p_data text[], p_meta text[],
     p_first int[],         -- per event: the index of the group's first event with its id
     OUT o_actual bigint[], -- per append: the stream's revision when its check failed, else null
     OUT o_next bigint[],
     OUT o_position bigint[]
   ) LANGUAGE plpgsql VOLATILE AS $fn$
   DECLARE
     v_events int := coalesce(array_length(p_id, 1), 0);
     v_rev bigint[];
     v_pos bigint[];
     v_stored boolean[];
     v_taken boolean[] := array_fill(false, ARRAY[v_events]);
     -- Per event: its stream and revision when written, null revision when not.
     v_ev_k int[] := array_fill(0, ARRAY[v_events]);
     v_ev_rev bigint[] := array_fill(NULL::bigint, ARRAY[v_events]);
     written boolean := false;
     e int := 0;
     k int;
     f int;
     cur bigint;
     rev bigint;
     holds boolean;
   BEGIN
     o_actual := '{}';
     o_next := '{}';
     PERFORM pg_advisory_xact_lock(p_lock);
     SELECT array_agg(coalesce(h.revision, -1) ORDER BY u.n), array_agg(coalesce(h.position, -1) ORDER BY u.n)
       INTO v_rev, v_pos
       FROM unnest(p_streams) WITH ORDINALITY AS u(s, n)
       LEFT JOIN LATERAL (
         SELECT x.revision, x.position FROM fleet_events x WHERE x.stream = u.s ORDER BY x.revision DESC LIMIT 1
       ) h ON true;
     SELECT array_agg(EXISTS (SELECT 1 FROM fleet_events x WHERE x.event_id = u.i) ORDER BY u.n)
       INTO v_stored
       FROM unnest(p_id) WITH ORDINALITY AS u(i, n);
     -- Text arrays are read only through unnest: a subscript walks a text array from its start.
     FOR a IN 1 .. coalesce(array_length(p_stream_of, 1), 0) LOOP
       k := p_stream_of[a];
       cur := v_rev[k];
       holds := CASE p_kind[a]
         WHEN 0 THEN true
         WHEN 1 THEN cur = -1
         WHEN 2 THEN cur <> -1
         ELSE p_revision[a] = cur
       END;
       IF NOT holds THEN
         o_actual[a] := cur;
         o_next[a] := NULL;
       ELSE
         rev := cur;
         FOR j IN e + 1 .. e + p_count[a] LOOP
           f := p_first[j];
           -- An id already in the log, or written earlier in this group, is acknowledged, not written again.
           CONTINUE WHEN v_stored[f] OR v_taken[f];
           v_taken[f] := true;
           rev := rev + 1;
           v_ev_k[j] := k;
           v_ev_rev[j] := rev;
           written := true;
         END LOOP;
         v_rev[k] := rev;
         o_actual[a] := NULL;
         o_next[a] := rev;
       END IF;
       e := e + p_count[a];
     END LOOP;
     -- Each append answers with its stream's last event: the row of this group at its revision, or
     -- the one stored before.
     WITH ins AS (
       INSERT INTO fleet_events (event_id, stream, revision, type, data, metadata, created)
       SELECT ev.i, s.name, ev.r, ev.t, ev.d, ev.m, p_created
         FROM unnest(p_id, p_type, p_data, p_meta, v_ev_k, v_ev_rev) WITH ORDINALITY AS ev(i, t, d, m, k, r, n)
         JOIN unnest(p_streams) WITH ORDINALITY AS s(name, k) ON s.k = ev.k
         WHERE ev.r IS NOT NULL
         ORDER BY ev.n
       RETURNING fleet_events.stream AS s, fleet_events.revision AS r, fleet_events.position AS p
     )
     SELECT array_agg(CASE WHEN a.x IS NULL THEN NULL ELSE coalesce(ins.p, h.p) END ORDER BY a.n) INTO o_position
       FROM unnest(o_next, p_stream_of) WITH ORDINALITY AS a(x, k, n)
       JOIN unnest(p_streams, v_pos) WITH ORDINALITY AS h(name, p, k) ON h.k = a.k
       LEFT JOIN ins ON ins.s = h.name AND ins.r = a.x;
     -- Delivered at COMMIT, once for the whole group.
     IF written THEN
       PERFORM pg_notify(p_channel, '');
     END IF;
   END
   $fn$`,
];

/** The object the schema creates last: present, the whole schema is (it is created in one transaction). */
export const POSTGRES_SCHEMA_LAST = 'fleet_append_v1(bigint,text,bigint,text[],int[],int[],bigint[],int[],text[],text[],text[],text[],int[])';
