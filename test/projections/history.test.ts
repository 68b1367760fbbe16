/**
 * The position history's layout: one row per plausible fix, clustered on
 * (device_id, fix_time, event_id), carrying the API's JSON of the fix; read
 * models of the column layout before it are encoded in place when opened.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { PositionRecorded } from '../../core/events.js';
import { historyItemJson } from '../../api/history-item.js';
import { historyProjection } from '../../projections/history/index.js';
import { readModelDb } from '../support/read-model-db.js';

const T0 = Date.UTC(2026, 10, 20, 8, 0, 0);
type Fix = PositionRecorded['data'];

function fix(i: number, over: Partial<Fix> = {}): Fix {
  return {
    device_id: `dev_${i % 2}`, customer_id: 'cus_1', protocol: 'teltonika', fix_time: T0 + i * 1000, received_at: T0 + i * 1000 + 400, valid: true,
    lat: 56.95 + i / 1000, lng: 24.1, speed_kmh: 30 + i, heading_deg: 90, altitude_m: 10, satellites: 9, ignition: true, odometer_m: i * 100.5,
    attributes: {}, ...over,
  };
}

const FIXES: Array<[string, Fix]> = [
  ['00000000-0000-4000-8000-000000000001', fix(0)],
  ['00000000-0000-4000-8000-000000000002', fix(1, { valid: false, ignition: false, odometer_m: null })],
  ['00000000-0000-4000-8000-000000000003', fix(2, { speed_kmh: null, heading_deg: null, altitude_m: null, satellites: null, ignition: null })],
  ['00000000-0000-4000-8000-000000000004', fix(3, { fix_time: T0 })], // a tie on fix time with the first of dev_1
  ['00000000-0000-4000-8000-000000000005', fix(4, { lat: 91 })], // implausible: not in the history
];

const rows = (db: Database.Database) => db.prepare('SELECT * FROM positions ORDER BY device_id, fix_time, event_id').all();

describe('history projection', () => {
  it('stores each plausible fix once, keyed for the range read, with the JSON the API lists', () => {
    const rm = readModelDb([historyProjection(historyItemJson)]);
    for (const [id, data] of FIXES) rm.apply({ type: 'PositionRecorded', data }, id);
    rm.apply({ type: 'PositionRecorded', data: FIXES[0]![1] }, FIXES[0]![0]); // the same event again: ignored
    expect(rows(rm.db)).toEqual(
      FIXES.slice(0, 4)
        .map(([id, d]) => ({ device_id: d.device_id, fix_time: d.fix_time, event_id: id, customer_id: d.customer_id, item: historyItemJson(d) }))
        .sort((a, b) => a.device_id.localeCompare(b.device_id) || a.fix_time - b.fix_time || a.event_id.localeCompare(b.event_id)),
    );
    const sql = rm.db.prepare("SELECT sql FROM sqlite_master WHERE name = 'positions'").pluck().get() as string;
    expect(sql).toMatch(/PRIMARY KEY \(device_id, fix_time, event_id\)\) WITHOUT ROWID$/);
    expect(rm.db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'positions'").pluck().get()).toBe(0);
  });

  it('encodes a read model of the column layout in place: the same rows as a rebuild from the log', () => {
    const db = new Database(':memory:');
    db.exec(`
      CREATE TABLE positions (
        event_id TEXT PRIMARY KEY, device_id TEXT NOT NULL, customer_id TEXT NOT NULL,
        fix_time INTEGER NOT NULL, received_at INTEGER NOT NULL, valid INTEGER NOT NULL,
        lat REAL NOT NULL, lng REAL NOT NULL, speed_kmh REAL, heading_deg REAL, altitude_m REAL,
        satellites INTEGER, ignition INTEGER, odometer_m REAL);
      CREATE INDEX positions_by_device_time ON positions (device_id, fix_time, event_id);`);
    const insert = db.prepare('INSERT INTO positions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    for (const [id, d] of FIXES.slice(0, 4)) {
      insert.run(id, d.device_id, d.customer_id, d.fix_time, d.received_at, d.valid ? 1 : 0, d.lat, d.lng, d.speed_kmh, d.heading_deg, d.altitude_m,
        d.satellites, d.ignition === null ? null : d.ignition ? 1 : 0, d.odometer_m);
    }
    const projection = historyProjection(historyItemJson);
    projection.migrate(db);
    projection.migrate(db); // idempotent
    const rebuilt = readModelDb([historyProjection(historyItemJson)]);
    for (const [id, data] of FIXES) rebuilt.apply({ type: 'PositionRecorded', data }, id);
    expect(rows(db)).toEqual(rows(rebuilt.db));
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'positions%' ORDER BY name").pluck().all()).toEqual(['positions']);
    // And it keeps taking events.
    const handler = projection.prepare(db);
    handler({ type: 'PositionRecorded', data: fix(9), id: '00000000-0000-4000-8000-000000000009' } as Parameters<typeof handler>[0]);
    expect(rows(db)).toHaveLength(5);
  });
});
