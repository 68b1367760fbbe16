/**
 * Position history: every stored fix that can be true (usable-fix.ts; an
 * implausible one stays in the log only), laid out for the one query it
 * answers, a device's fixes in time order read by range and page. The table is
 * clustered on one integer key (key.ts) that sorts a device's fixes by time:
 * its number, then the fix time, then a slot for fixes of the same
 * millisecond. A page is one contiguous range scan of the table's b-tree, and a
 * late fix simply lands in its place.
 *
 * An integer key, not (device_id, fix_time, event_id): a table keyed on text
 * columns (WITHOUT ROWID) keeps whole rows in its interior pages, ten of these
 * rows to a page, so every batch rewrote a deep tree; eight-byte keys inside
 * write less and keep the file smaller (docs/performance.md; see
 * docs/architecture.md, The position history).
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
import type { Logger } from '../../core/logger.js';
import { batchHandler, type Projection } from '../projection.js';
import { isPlausibleFix } from '../usable-fix.js';
import { CREATE_HISTORY_DEVICES, deviceNumbers } from './device-numbers.js';
import { HISTORY_SLOTS, deviceBaseSql, isKeyableFixTime, keySql } from './key.js';

/** The fields of a fix a history item is made of. */
export type HistoryFix = Pick<
  PositionRecorded['data'],
  'device_id' | 'fix_time' | 'received_at' | 'valid' | 'lat' | 'lng' | 'speed_kmh' | 'heading_deg' | 'altitude_m' | 'satellites' | 'ignition' | 'odometer_m' | 'attributes'
>;

/** A fix's JSON exactly as GET /v1/positions lists it. */
export type HistoryItemEncoder = (fix: HistoryFix) => string;

/** The columns a history row keeps besides its key (key.ts). */
const CREATE = `
  CREATE TABLE IF NOT EXISTS positions (k INTEGER PRIMARY KEY, event_id TEXT NOT NULL, customer_id TEXT NOT NULL, item TEXT NOT NULL);
  ${CREATE_HISTORY_DEVICES};`;

/**
 * Fixes are inserted this many to a statement: one call into SQLite per row was a fifth of a
 * replay's insert time (docs/performance.md).
 */
const ROWS_PER_INSERT = 32;
/** A row's values: device number, fix time, event id, customer id, item. Its key is made by SQLite, in slot 0. */
const ROW = `(${keySql(deviceBaseSql('?'), '?')}, ?, ?, ?)`;
const VALUES_PER_ROW = 5;
const insertSql = (rows: number) => `INSERT OR IGNORE INTO positions (k, event_id, customer_id, item) VALUES ${Array<string>(rows).fill(ROW).join(', ')}`;

export function createHistoryTable(db: Database.Database): void {
  db.exec(CREATE);
}

/** Why a plausible fix is not in the history (key.ts), logged once per device and reason. */
type LeftOut = 'too_many_devices' | 'time_past_2069' | 'too_many_fixes_in_one_millisecond';

export function historyProjection(encodeItem: HistoryItemEncoder, log?: Pick<Logger, 'warn'>): Projection {
  return {
    name: 'history',
    migrate: createHistoryTable,
    prepare(db: Database.Database) {
      const insertOne = db.prepare(insertSql(1));
      const insertFull = db.prepare(insertSql(ROWS_PER_INSERT));
      const idAt = db.prepare(`SELECT event_id FROM positions WHERE k = ${keySql(deviceBaseSql('?'), '?', '?')}`).pluck();
      const insertAt = db.prepare(`INSERT INTO positions (k, event_id, customer_id, item) VALUES (${keySql(deviceBaseSql('?'), '?', '?')}, ?, ?, ?)`);
      const numbers = deviceNumbers(db);
      const deviceOf = db.prepare('SELECT device_id FROM history_devices WHERE num = ?').pluck();
      const warned = new Set<string>();
      const leaveOut = (deviceId: string, eventId: string, reason: LeftOut) => {
        if (warned.has(`${deviceId} ${reason}`)) return;
        warned.add(`${deviceId} ${reason}`);
        log?.warn({ device_id: deviceId, event_id: eventId, reason }, 'a fix is left out of the position history (it stays in the log); further ones of this device for this reason are not logged');
      };
      /**
       * A row of `values` from `at` that slot 0 ignored: a fix already stored (a replay), or another fix
       * of the same millisecond, which takes the next free slot.
       */
      const placeIgnored = (values: Array<string | number>, at: number) => {
        const [num, time, eventId, customerId, item] = values.slice(at, at + VALUES_PER_ROW) as [number, number, string, string, string];
        for (let slot = 0; slot < HISTORY_SLOTS; slot++) {
          const stored = idAt.get(num, time, slot) as string | undefined;
          if (stored === eventId) return;
          if (stored === undefined) {
            insertAt.run(num, time, slot, eventId, customerId, item);
            return;
          }
        }
        leaveOut(deviceOf.get(num) as string, eventId, 'too_many_fixes_in_one_millisecond');
      };
      // The values of the rows not inserted yet, a row's five after another's.
      const pending: Array<string | number> = [];
      const insertPending = (insert: Database.Statement, from: number, rows: number) => {
        const values = from === 0 && rows * VALUES_PER_ROW === pending.length ? pending : pending.slice(from, from + rows * VALUES_PER_ROW);
        if (insert.run(values).changes === rows) return;
        for (let i = 0; i < values.length; i += VALUES_PER_ROW) placeIgnored(values, i);
      };
      return batchHandler(
        (e) => {
          if (e.type !== 'PositionRecorded' || !isPlausibleFix(e.data)) return;
          const d = e.data;
          if (!isKeyableFixTime(d.fix_time)) return leaveOut(d.device_id, e.id, 'time_past_2069');
          const num = numbers.of(d.device_id);
          if (num === null) return leaveOut(d.device_id, e.id, 'too_many_devices');
          pending.push(num, Math.floor(d.fix_time), e.id, d.customer_id, encodeItem(d));
          if (pending.length === ROWS_PER_INSERT * VALUES_PER_ROW) {
            insertPending(insertFull, 0, ROWS_PER_INSERT);
            pending.length = 0;
          }
        },
        {
          flush() {
            for (let i = 0; i < pending.length; i += VALUES_PER_ROW) insertPending(insertOne, i, 1);
            pending.length = 0;
          },
          discard() {
            pending.length = 0;
            numbers.forget();
          },
        },
      );
    },
  };
}
