/**
 * Position history: every stored fix that can be true (usable-fix.ts; an
 * implausible one stays in the log only), laid out for the one query it
 * answers, a device's fixes in time order read by range and page. The table is
 * clustered on (device_id, fix_time, event_id) (WITHOUT ROWID: one b-tree, no
 * second index to keep), so a page is one contiguous range scan; late fixes
 * simply land in their place.
 *
 * Each row carries the fix as the API lists it: its JSON, made once here by the
 * encoder the composition root hands over (the API's own serializer of its
 * HistoryPosition schema: projections/ never imports api/). A page is then
 * those strings joined, with no object built or serialised per row. The stored
 * bytes follow the API's item shape, so a change of that shape needs
 * READ_MODEL_VERSION bumped (test/api/positions.test.ts pins the schema).
 *
 * It is the largest read model (a row per fix, its JSON made per fix), so it
 * lives in a database of its own, applied by a runner of its own beside the
 * other read models (database.ts, thread.ts): a replay or a backlog uses both
 * cores, and its rows are not in the other read models' commits.
 */
import type Database from 'better-sqlite3';
import type { PositionRecorded } from '../../core/events.js';
import { batchHandler, type Projection } from '../projection.js';
import { isPlausibleFix } from '../usable-fix.js';

/** The fields of a fix a history item is made of. */
export type HistoryFix = Pick<
  PositionRecorded['data'],
  'device_id' | 'fix_time' | 'received_at' | 'valid' | 'lat' | 'lng' | 'speed_kmh' | 'heading_deg' | 'altitude_m' | 'satellites' | 'ignition' | 'odometer_m'
>;

/** A fix's JSON exactly as GET /v1/positions lists it. */
export type HistoryItemEncoder = (fix: HistoryFix) => string;

const CREATE = `
  CREATE TABLE IF NOT EXISTS positions (
    device_id TEXT NOT NULL, fix_time INTEGER NOT NULL, event_id TEXT NOT NULL, customer_id TEXT NOT NULL, item TEXT NOT NULL,
    PRIMARY KEY (device_id, fix_time, event_id)) WITHOUT ROWID`;
/**
 * Fixes are inserted this many to a statement: one call into SQLite per row was a fifth
 * of a replay's insert time (a microbench of 500k rows: 1.25-1.30 s in 32s, 1.6-1.75 s
 * one by one).
 */
const ROWS_PER_INSERT = 32;
const insertSql = (rows: number) =>
  `INSERT OR IGNORE INTO positions (device_id, fix_time, event_id, customer_id, item) VALUES ${Array<string>(rows).fill('(?, ?, ?, ?, ?)').join(', ')}`;
const VALUES_PER_ROW = 5;

export function createHistoryTable(db: Database.Database): void {
  db.exec(CREATE);
}

export function historyProjection(encodeItem: HistoryItemEncoder): Projection {
  return {
    name: 'history',
    migrate: createHistoryTable,
    prepare(db: Database.Database) {
      const insertOne = db.prepare(insertSql(1));
      const insertFull = db.prepare(insertSql(ROWS_PER_INSERT));
      // The values of the rows not inserted yet, a row's five after another's.
      const pending: Array<string | number> = [];
      return batchHandler(
        (e) => {
          if (e.type !== 'PositionRecorded' || !isPlausibleFix(e.data)) return;
          const d = e.data;
          pending.push(d.device_id, d.fix_time, e.id, d.customer_id, encodeItem(d));
          if (pending.length === ROWS_PER_INSERT * VALUES_PER_ROW) {
            insertFull.run(pending);
            pending.length = 0;
          }
        },
        {
          flush() {
            for (let i = 0; i < pending.length; i += VALUES_PER_ROW) insertOne.run(pending.slice(i, i + VALUES_PER_ROW));
            pending.length = 0;
          },
          discard() {
            pending.length = 0;
          },
        },
      );
    },
  };
}
