/**
 * The position history's layout: one row per plausible fix, clustered on
 * (device_id, fix_time, event_id), carrying the API's JSON of the fix, in a
 * database of its own; a history kept in the read-model database moves there.
 */
import type Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PositionRecorded } from '../../core/events.js';
import { historyItemJson } from '../../api/history-item.js';
import { historyProjection } from '../../projections/history/index.js';
import { historyCacheSizer, moveHistoryOut, openHistoryDb } from '../../projections/history/database.js';
import { checkpointReader, openReadModelDb } from '../../projections/runner.js';
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

  it('stores every fix of a batch of several statements full of rows, and nothing of a batch that rolled back', () => {
    const db = openReadModelDb(':memory:');
    const projection = historyProjection(historyItemJson);
    projection.migrate(db);
    const handler = projection.prepare(db);
    const apply = (from: number, count: number) => {
      for (let i = from; i < from + count; i++) handler({ type: 'PositionRecorded', data: fix(i), id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` } as Parameters<typeof handler>[0]);
    };
    // 70 fixes: two statements of rows and a remainder written at the batch's end.
    db.transaction(() => {
      apply(0, 70);
      handler.flush?.();
    })();
    expect(rows(db)).toHaveLength(70);
    expect(new Set(rows(db).map((r) => (r as { fix_time: number }).fix_time))).toEqual(new Set(Array.from({ length: 70 }, (_, i) => T0 + i * 1000)));
    // A batch that failed: what it kept unwritten is forgotten, not written with the next batch.
    apply(100, 10);
    handler.discard?.();
    db.transaction(() => {
      apply(200, 1);
      handler.flush?.();
    })();
    const times = rows(db).map((r) => (r as { fix_time: number }).fix_time);
    expect(times).toHaveLength(71);
    expect(times).toContain(T0 + 200 * 1000);
    expect(times).not.toContain(T0 + 100 * 1000);
    db.close();
  });

  it('moves out of the read-model database with its checkpoint, once, and drops a table of the older column layout', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-history-move-'));
    try {
      // A read-model database from before the history had its own: the history's rows and the checkpoint they were committed with.
      const readModels = openReadModelDb(join(dir, 'readmodels.sqlite'));
      const projection = historyProjection(historyItemJson);
      projection.migrate(readModels);
      const handler = projection.prepare(readModels);
      for (const [id, data] of FIXES) handler({ type: 'PositionRecorded', data, id } as Parameters<typeof handler>[0]);
      handler.flush?.(); // as the runner does at a batch's end
      readModels.prepare("INSERT INTO checkpoints (name, position) VALUES ('read-models', '42/42')").run();
      const before = rows(readModels);
      expect(before).toHaveLength(4);

      const historyPath = join(dir, 'history.sqlite');
      moveHistoryOut(readModels, historyPath);
      moveHistoryOut(readModels, historyPath); // idempotent
      expect(readModels.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'positions'").pluck().get()).toBe(0);
      const history = openHistoryDb(historyPath);
      expect(rows(history)).toEqual(before);
      expect(checkpointReader(history)()).toEqual({ commit: 42n, prepare: 42n });
      history.close();

      // The column layout (before each row carried its JSON) is not moved: the history's runner rebuilds it from the log.
      const older = openReadModelDb(join(dir, 'older.sqlite'));
      older.exec('CREATE TABLE positions (event_id TEXT PRIMARY KEY, device_id TEXT NOT NULL, fix_time INTEGER NOT NULL, lat REAL NOT NULL)');
      older.prepare("INSERT INTO positions VALUES ('e1', 'dev_0', 1, 56.9)").run();
      const olderHistoryPath = join(dir, 'older-history.sqlite');
      moveHistoryOut(older, olderHistoryPath);
      expect(older.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'positions'").pluck().get()).toBe(0);
      expect(existsSync(olderHistoryPath)).toBe(false);
      readModels.close();
      older.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("sizes its writer's page cache for each batch: a page per fix beyond the base, at most a live batch's, and the base again after a small batch", () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-history-cache-'));
    try {
      const db = openHistoryDb(join(dir, 'history.sqlite'));
      const cachePages = () => db.pragma('cache_size', { simple: true });
      expect(cachePages()).toBe(4096);
      const sizeFor = historyCacheSizer(db);
      sizeFor(16_000);
      const liveMost = cachePages() as number;
      expect(liveMost).toBeGreaterThanOrEqual(16_000);
      // A start batch of 48,000 fixes gets no more than a live batch of 16,000.
      sizeFor(48_000);
      expect(cachePages()).toBe(liveMost);
      sizeFor(50);
      expect(cachePages()).toBe(4096);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
