/** Prepared statements cached per database, so query modules can stay plain functions. */
import type Database from 'better-sqlite3';

const cache = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/**
 * `raw` statements return rows as arrays, in column order: for long pages this halves the
 * cost of reading them (better-sqlite3 builds objects slowly). Cached apart from the
 * object-returning statement of the same SQL, so one caller's mode never leaks to another.
 */
export function stmt(db: Database.Database, sql: string, mode: 'objects' | 'raw' = 'objects'): Database.Statement {
  let byDb = cache.get(db);
  if (!byDb) {
    byDb = new Map();
    cache.set(db, byDb);
  }
  const key = mode === 'raw' ? `raw:${sql}` : sql;
  let s = byDb.get(key);
  if (!s) {
    s = db.prepare(sql);
    if (mode === 'raw') s.raw(true);
    byDb.set(key, s);
  }
  return s;
}
