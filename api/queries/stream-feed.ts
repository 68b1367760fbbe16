/** The live stream's resume reads (projections/stream-feed): a customer's messages in log order, scoped to the customer. */
import type Database from 'better-sqlite3';
import type { LogPosition } from '../../core/event-store/port.js';
import { boundLimit } from '../../core/sqlite-limit.js';
import { stmt } from './statements.js';

export { FEED_COMMAND, FEED_EVENT, FEED_POSITION } from '../../projections/stream-feed/index.js';

/** Where one message's event is: its log position, what it is, and its stream and revision. */
export interface FeedPointer {
  position: LogPosition;
  kind: number;
  stream: string;
  revision: bigint;
}

/** Row values compare (commit, prepare) as the log orders them, and the primary key serves the range. */
const PAGE = `SELECT commit_pos, prepare_pos, kind, stream, revision FROM stream_feed
  WHERE customer_id = ? AND (commit_pos, prepare_pos) > (?, ?) AND (commit_pos, prepare_pos) <= (?, ?) AND kind IN (?, ?, ?)
  ORDER BY commit_pos, prepare_pos LIMIT ${boundLimit()}`;

/** Up to `limit` of the customer's messages after `after` and up to `through`, of the kinds asked for. */
export function feedPointers(
  db: Database.Database,
  customerId: string,
  range: { after: LogPosition; through: LogPosition },
  kinds: readonly [number, number, number],
  limit: number,
): FeedPointer[] {
  const rows = stmt(db, PAGE, 'raw')
    .safeIntegers(true)
    .all(customerId, range.after.commit, range.after.prepare, range.through.commit, range.through.prepare, kinds[0], kinds[1], kinds[2], limit) as Array<
    [bigint, bigint, bigint, string, bigint]
  >;
  return rows.map(([commit, prepare, kind, stream, revision]) => ({ position: { commit, prepare }, kind: Number(kind), stream, revision }));
}
