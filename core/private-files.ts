/**
 * The data directory holds every position and every credential hash of every
 * customer: only the user running the platform may read it. Directories are
 * created 0700 and SQLite files made 0600 (SQLite gives its -wal and -shm
 * files the mode of the database file when it creates them). Files and
 * directories made by older versions with the default umask are tightened on
 * open.
 */
import Database from 'better-sqlite3';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates the directory (and missing parents) readable by the owner only; an existing one is tightened. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(dir, PRIVATE_DIR_MODE);
}

/** A SQLite database file and its WAL companions, readable by the owner only (those that exist). */
export function makeSqliteFilesPrivate(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file)) chmodSync(file, PRIVATE_FILE_MODE);
  }
}

/**
 * Opens (creating) a SQLite file in WAL mode, its directory and files private;
 * `:memory:` for tests. Durability (`synchronous`) is the caller's to choose.
 * `pageSize` applies to a file created now: an existing database keeps its own
 * (a database in WAL mode cannot change it).
 */
export function openPrivateSqlite(path: string, options: { pageSize?: number } = {}): Database.Database {
  if (path === ':memory:') return new Database(path);
  ensurePrivateDir(dirname(path));
  const db = new Database(path);
  makeSqliteFilesPrivate(path);
  if (options.pageSize !== undefined) db.pragma(`page_size = ${options.pageSize}`);
  db.pragma('journal_mode = WAL');
  return db;
}
