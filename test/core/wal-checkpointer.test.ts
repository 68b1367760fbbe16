/**
 * The WAL checkpointer thread (core/wal-checkpointer.ts): a database whose own
 * commits never checkpoint still has its WAL folded back into its file, by a
 * connection in another thread.
 */
import { mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openPrivateSqlite } from '../../core/private-files.js';
import { checkpointInBackground, type WalCheckpointer } from '../../core/wal-checkpointer.js';
import { until } from '../support/device-login.js';

const ROWS = 2000;
const ROW_BYTES = 1000;

/** About 2 MB of rows in twenty commits: far more than a fresh file's few pages. */
function writeRows(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
  const commit = db.transaction(() => {
    for (let i = 0; i < ROWS / 20; i++) insert.run('x'.repeat(ROW_BYTES));
  });
  for (let c = 0; c < 20; c++) commit.immediate();
}

describe('WAL checkpointer', () => {
  let dir: string;
  const open: Array<{ db: Database.Database; checkpointer?: WalCheckpointer }> = [];

  afterEach(() => {
    for (const o of open.splice(0)) {
      o.checkpointer?.close();
      o.db.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('folds the WAL of a database that never checkpoints itself back into its file, from another thread', async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-wal-'));
    const path = join(dir, 'owned.sqlite');
    const db = openPrivateSqlite(path);
    const checkpointer = checkpointInBackground(db);
    open.push({ db, checkpointer });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    // A RESTART checkpoint holds writers back: the owner waits for it instead of failing at once.
    expect(db.pragma('busy_timeout', { simple: true })).toBeGreaterThanOrEqual(5000);

    writeRows(db);
    await until(() => statSync(path).size >= ROWS * ROW_BYTES, 20_000, 'the rows copied from the WAL into the file');
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(ROWS);
  });

  it('leaves the owner checkpointing at its commits when its thread cannot open the file (closed and removed first)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-wal-'));
    const path = join(dir, 'moved.sqlite');
    const db = openPrivateSqlite(path);
    open.push({ db });
    // The owner's connection stays open on the moved file; the thread finds nothing at the old name.
    renameSync(path, join(dir, 'elsewhere.sqlite'));
    const checkpointer = checkpointInBackground(db);
    open[0]!.checkpointer = checkpointer;
    await until(() => db.pragma('wal_autocheckpoint', { simple: true }) !== 0, 20_000, 'automatic checkpoints back on');
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });

  it('leaves the WAL alone without it: the same writes with automatic checkpoints off stay in the WAL', () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-wal-'));
    const path = join(dir, 'unowned.sqlite');
    const db = openPrivateSqlite(path);
    open.push({ db });
    db.pragma('wal_autocheckpoint = 0');

    writeRows(db);
    expect(statSync(path).size).toBeLessThan(ROWS * ROW_BYTES);
    expect(statSync(`${path}-wal`).size).toBeGreaterThanOrEqual(ROWS * ROW_BYTES);
  });
});
