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
 */
import type Database from 'better-sqlite3';
import type { PositionRecorded } from '../../core/events.js';
import type { Projection } from '../projection.js';
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
const INSERT = 'INSERT OR IGNORE INTO positions (device_id, fix_time, event_id, customer_id, item) VALUES (?, ?, ?, ?, ?)';

export function historyProjection(encodeItem: HistoryItemEncoder): Projection {
  return {
    name: 'history',
    migrate(db) {
      const columns = db.prepare("SELECT name FROM pragma_table_info('positions')").pluck().all() as string[];
      if (columns.length > 0 && !columns.includes('item')) upgradeColumnLayout(db, encodeItem);
      db.exec(CREATE);
    },
    prepare(db: Database.Database) {
      const insert = db.prepare(INSERT);
      return (e) => {
        if (e.type !== 'PositionRecorded' || !isPlausibleFix(e.data)) return;
        const d = e.data;
        insert.run(d.device_id, d.fix_time, e.id, d.customer_id, encodeItem(d));
      };
    },
  };
}

/** A row of the layout before this one: a rowid table of the fix's columns, indexed by device and time. */
type ColumnRow = Omit<HistoryFix, 'valid' | 'ignition'> & {
  rowid: number;
  event_id: string;
  customer_id: string;
  /** SQLite booleans: 0 or 1 (ignition also null). */
  valid: number;
  ignition: number | null;
};

/**
 * Read models built before this layout hold every fix's fields in columns:
 * their rows are encoded into the new table in place (same rows, the checkpoint
 * unchanged), in one transaction, instead of a rebuild of every read model from
 * the log.
 */
function upgradeColumnLayout(db: Database.Database, encodeItem: HistoryItemEncoder): void {
  db.transaction(() => {
    db.exec('ALTER TABLE positions RENAME TO positions_column_layout');
    db.exec(CREATE);
    const read = db.prepare('SELECT rowid, * FROM positions_column_layout WHERE rowid > ? ORDER BY rowid LIMIT 10000');
    const insert = db.prepare(INSERT);
    for (let after = 0; ; ) {
      const rows = read.all(after) as ColumnRow[];
      if (rows.length === 0) break;
      for (const r of rows) {
        const fix: HistoryFix = { ...r, valid: r.valid === 1, ignition: r.ignition === null ? null : r.ignition === 1 };
        insert.run(r.device_id, r.fix_time, r.event_id, r.customer_id, encodeItem(fix));
      }
      after = rows[rows.length - 1]!.rowid;
    }
    db.exec('DROP TABLE positions_column_layout');
  })();
}
