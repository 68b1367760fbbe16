/**
 * Panel users and their sessions (hashes of session tokens only), for cookie
 * authentication. Password hashes stay in the log: logins read them there.
 */
import type Database from 'better-sqlite3';
import type { Projection } from '../projection.js';

/** Sessions that ended or expired this long before a new login of the same user are dropped then. */
const ENDED_SESSION_RETENTION_MS = 86_400_000;

export const usersProjection: Projection = {
  name: 'users',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS users (
        user_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, email TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
        created_at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS users_by_customer ON users (customer_id, user_id);
      CREATE TABLE IF NOT EXISTS sessions (
        token_sha256 TEXT PRIMARY KEY, session_id TEXT NOT NULL UNIQUE, user_id TEXT NOT NULL, customer_id TEXT NOT NULL,
        started_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, ended_at INTEGER);
      CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions (user_id, expires_at);`);
  },
  prepare(db: Database.Database) {
    const putUser = db.prepare('INSERT OR REPLACE INTO users (user_id, customer_id, email, name, created_at) VALUES (?, ?, ?, ?, ?)');
    const putSession = db.prepare(
      `INSERT OR IGNORE INTO sessions (token_sha256, session_id, user_id, customer_id, started_at, expires_at, ended_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL)`,
    );
    const endSession = db.prepare('UPDATE sessions SET ended_at = ? WHERE session_id = ? AND customer_id = ? AND ended_at IS NULL');
    // Housekeeping on the event's own time (not the wall clock), so replays build the same table.
    const prune = db.prepare('DELETE FROM sessions WHERE user_id = ? AND min(expires_at, coalesce(ended_at, expires_at)) < ?');
    return (e) => {
      switch (e.type) {
        case 'CustomerUserCreated':
          putUser.run(e.data.user_id, e.data.customer_id, e.data.email, e.data.name, e.data.created_at);
          return;
        case 'SessionStarted':
          prune.run(e.data.user_id, e.data.started_at - ENDED_SESSION_RETENTION_MS);
          putSession.run(e.data.token_sha256, e.data.session_id, e.data.user_id, e.data.customer_id, e.data.started_at, e.data.expires_at);
          return;
        case 'SessionEnded':
          endSession.run(e.data.ended_at, e.data.session_id, e.data.customer_id);
          return;
        default:
          return;
      }
    };
  },
};
