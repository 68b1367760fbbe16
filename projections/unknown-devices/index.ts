/** Units that connected without a registration: first/last seen and how many frames were refused. */
import type Database from 'better-sqlite3';
import type { Projection } from '../projection.js';

export const unknownDevicesProjection: Projection = {
  name: 'unknown-devices',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS unknown_devices (
        identifier TEXT PRIMARY KEY, protocol TEXT NOT NULL, remote_address TEXT NOT NULL,
        first_seen_at INTEGER NOT NULL, last_seen_at INTEGER NOT NULL, count INTEGER NOT NULL);`);
  },
  prepare(db: Database.Database) {
    const upsert = db.prepare(
      `INSERT INTO unknown_devices (identifier, protocol, remote_address, first_seen_at, last_seen_at, count)
       VALUES (@identifier, @protocol, @remote_address, @at, @at, @count)
       ON CONFLICT(identifier) DO UPDATE SET protocol = excluded.protocol, remote_address = excluded.remote_address,
         first_seen_at = min(first_seen_at, excluded.first_seen_at),
         last_seen_at = max(last_seen_at, excluded.last_seen_at), count = count + excluded.count`,
    );
    return (e) => {
      if (e.type === 'UnknownDeviceSeen') upsert.run(e.data);
    };
  },
};
