/**
 * The position history's layout: one row per plausible fix, clustered on an
 * integer key (device number, fix time, slot: projections/history/key.ts),
 * carrying the API's JSON of the fix, in a database of its own; a history of an
 * older layout is dropped and rebuilt from the log.
 */
import type Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PositionRecorded } from '../../core/events.js';
import type { Logger } from '../../core/logger.js';
import { historyItemJson } from '../../api/history-item.js';
import { historyProjection } from '../../projections/history/index.js';
import { HISTORY_LAST_FIX_MS, HISTORY_MAX_DEVICES } from '../../projections/history/key.js';
import { dropHistoryFromReadModels, historyCacheSizer, openHistoryDb } from '../../projections/history/database.js';
import { checkpointReader, openReadModelDb } from '../../projections/runner.js';
import { historyRows } from '../support/history-rows.js';
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
  // The same millisecond as dev_1's first, with a lower id: it comes after it all the same, in the order applied.
  ['00000000-0000-4000-8000-000000000000', fix(3, { fix_time: T0 + 1000 })],
  ['00000000-0000-4000-8000-000000000005', fix(4, { lat: 91 })], // implausible: not in the history
];

const eventId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** The history's handler over a database of its own, fed fixes in batches, with what it warned about. */
function historyWriter(db: Database.Database = openReadModelDb(':memory:')) {
  const warnings: Array<Record<string, unknown>> = [];
  const log = { warn: (fields: Record<string, unknown>) => warnings.push(fields) } as unknown as Pick<Logger, 'warn'>;
  const projection = historyProjection(historyItemJson, log);
  projection.migrate(db);
  const handler = projection.prepare(db);
  const handle = (id: string, data: Fix) => handler({ type: 'PositionRecorded', data, id } as Parameters<typeof handler>[0]);
  const batch = (fixes: Array<[string, Fix]>) =>
    db.transaction(() => {
      for (const [id, data] of fixes) handle(id, data);
      handler.flush?.();
    })();
  return { db, warnings, handle, handler, batch };
}

describe('history projection', () => {
  it('stores each plausible fix once, in time order per device, with the JSON the API lists', () => {
    const rm = readModelDb([historyProjection(historyItemJson)]);
    for (const [id, data] of FIXES) rm.apply({ type: 'PositionRecorded', data }, id);
    rm.apply({ type: 'PositionRecorded', data: FIXES[0]![1] }, FIXES[0]![0]); // the same event again: ignored
    rm.apply({ type: 'PositionRecorded', data: FIXES[3]![1] }, FIXES[3]![0]); // and the tie again: ignored too
    const row = ([id, d]: [string, Fix], slot = 0) => ({ device_id: d.device_id, fix_time: d.fix_time, slot, event_id: id, customer_id: d.customer_id, item: historyItemJson(d) });
    // dev_0 came first (number 1), then dev_1; each device's fixes by time, then in the order applied.
    expect(historyRows(rm.db)).toEqual([row(FIXES[0]!), row(FIXES[2]!), row(FIXES[1]!), row(FIXES[3]!, 1)]);
    const sql = rm.db.prepare("SELECT sql FROM sqlite_master WHERE name = 'positions'").pluck().get() as string;
    expect(sql).toMatch(/\(k INTEGER PRIMARY KEY, /);
    expect(rm.db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'positions'").pluck().get()).toBe(0);
  });

  it('stores every fix of a batch of several statements full of rows, and nothing of a batch that rolled back', () => {
    const { db, handle, handler, batch } = historyWriter();
    const fixes = (from: number, count: number) => Array.from({ length: count }, (_, k): [string, Fix] => [eventId(from + k), fix(from + k)]);
    // 70 fixes: two statements of rows and a remainder written at the batch's end.
    batch(fixes(0, 70));
    expect(historyRows(db)).toHaveLength(70);
    expect(new Set(historyRows(db).map((r) => r.fix_time))).toEqual(new Set(Array.from({ length: 70 }, (_, i) => T0 + i * 1000)));
    // A batch that failed: what it kept unwritten is forgotten, not written with the next batch.
    for (const [id, data] of fixes(100, 10)) handle(id, data);
    handler.discard?.();
    batch(fixes(200, 1));
    const times = historyRows(db).map((r) => r.fix_time);
    expect(times).toHaveLength(71);
    expect(times).toContain(T0 + 200 * 1000);
    expect(times).not.toContain(T0 + 100 * 1000);
    db.close();
  });

  it('keeps four fixes of a device in one millisecond, in the order applied, inside a statement of rows or across batches; a fifth is left out and warned about once', () => {
    const { db, warnings, batch } = historyWriter();
    // 48 fixes of dev_0, three to a millisecond: ties inside the first statement of 32 rows and across it.
    const triples = Array.from({ length: 48 }, (_, i): [string, Fix] => [eventId(1000 - i), fix(0, { fix_time: T0 + Math.floor(i / 3) * 1000, lat: 56 + i / 100 })]);
    batch(triples);
    // A fourth and a fifth for the first millisecond, in a later batch, then the whole of it again (a replay).
    const more: Array<[string, Fix]> = [[eventId(1), fix(0, { fix_time: T0, lat: 1 })], [eventId(2), fix(0, { fix_time: T0, lat: 2 })]];
    batch(more);
    batch([...triples, ...more]);
    const rows = historyRows(db);
    expect(rows).toHaveLength(49);
    expect(rows.map((r) => [r.fix_time, r.slot, r.event_id])).toEqual([
      ...triples.slice(0, 3).map(([id, d], slot) => [d.fix_time, slot, id]),
      [T0, 3, eventId(1)],
      ...triples.slice(3).map(([id, d], i) => [d.fix_time, i % 3, id]),
    ]);
    expect(warnings).toEqual([expect.objectContaining({ device_id: 'dev_0', event_id: eventId(2), reason: 'too_many_fixes_in_one_millisecond' })]);
    db.close();
  });

  it('leaves out a fix dated past what its key holds, and the fixes of devices past the most it numbers, warning once for each', () => {
    const { db, warnings, batch } = historyWriter();
    db.prepare('INSERT INTO history_devices (num, device_id) VALUES (?, ?)').run(HISTORY_MAX_DEVICES, 'dev_last');
    batch([
      [eventId(1), fix(0, { device_id: 'dev_last', fix_time: HISTORY_LAST_FIX_MS })],
      [eventId(2), fix(0, { device_id: 'dev_last', fix_time: HISTORY_LAST_FIX_MS + 1 })],
      [eventId(3), fix(0, { device_id: 'dev_late', fix_time: T0 })],
      [eventId(4), fix(0, { device_id: 'dev_late', fix_time: T0 + 1000 })],
    ]);
    expect(historyRows(db).map((r) => [r.device_id, r.fix_time])).toEqual([['dev_last', HISTORY_LAST_FIX_MS]]);
    expect(warnings).toEqual([
      expect.objectContaining({ device_id: 'dev_last', event_id: eventId(2), reason: 'time_past_2069' }),
      expect.objectContaining({ device_id: 'dev_late', event_id: eventId(3), reason: 'too_many_devices' }),
    ]);
    expect(db.prepare('SELECT count(*) FROM history_devices').pluck().get()).toBe(1);
    db.close();
  });

  it('forgets the device numbers a rolled-back batch gave', () => {
    const { db, handle, handler, batch } = historyWriter();
    // dev_a is numbered in a batch that rolls back: its number is gone with it, and dev_b gets it next.
    db.exec('BEGIN');
    handle(eventId(1), fix(0, { device_id: 'dev_a' }));
    handler.flush?.();
    db.exec('ROLLBACK');
    handler.discard?.();
    batch([[eventId(2), fix(0, { device_id: 'dev_b' })], [eventId(3), fix(1, { device_id: 'dev_a' })]]);
    expect(historyRows(db).map((r) => [r.device_id, r.event_id])).toEqual([['dev_b', eventId(2)], ['dev_a', eventId(3)]]);
    db.close();
  });

  it('is dropped from the read-model database, and dropped with its checkpoint where its layout is older than the integer key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-history-layout-'));
    try {
      // A read-model database from before the history had its own.
      const readModels = openReadModelDb(join(dir, 'readmodels.sqlite'));
      readModels.exec('CREATE TABLE positions (event_id TEXT PRIMARY KEY, device_id TEXT NOT NULL, fix_time INTEGER NOT NULL, lat REAL NOT NULL)');
      readModels.prepare("INSERT INTO checkpoints (name, position) VALUES ('read-models', '42/42')").run();
      dropHistoryFromReadModels(readModels);
      dropHistoryFromReadModels(readModels); // idempotent
      expect(readModels.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'positions'").pluck().get()).toBe(0);
      expect(checkpointReader(readModels)()).toEqual({ commit: 42n, prepare: 42n });
      readModels.close();

      // A history database of the layout keyed on (device_id, fix_time, event_id), committed up to 42/42.
      const historyPath = join(dir, 'history.sqlite');
      const older = openReadModelDb(historyPath);
      older.exec(`CREATE TABLE positions (device_id TEXT NOT NULL, fix_time INTEGER NOT NULL, event_id TEXT NOT NULL, customer_id TEXT NOT NULL,
        item TEXT NOT NULL, PRIMARY KEY (device_id, fix_time, event_id)) WITHOUT ROWID`);
      older.prepare("INSERT INTO positions VALUES ('dev_0', 1, 'e1', 'cus_1', '{}')").run();
      older.prepare("INSERT INTO checkpoints (name, position) VALUES ('read-models', '42/42')").run();
      older.close();
      const history = openHistoryDb(historyPath);
      expect(checkpointReader(history)()).toBeNull();
      expect(history.prepare('SELECT count(*) FROM positions').pluck().get()).toBe(0);
      history.close();
      // Opened again, the history of the current layout keeps its rows and checkpoint.
      const { db, batch } = historyWriter(openHistoryDb(historyPath));
      batch([[eventId(1), fix(0)]]);
      db.prepare("INSERT INTO checkpoints (name, position) VALUES ('read-models', '43/43')").run();
      db.close();
      const reopened = openHistoryDb(historyPath);
      expect(historyRows(reopened)).toHaveLength(1);
      expect(checkpointReader(reopened)()).toEqual({ commit: 43n, prepare: 43n });
      reopened.close();
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
