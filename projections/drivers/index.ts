/** Drivers of every customer. The current vehicle is not kept here: it is the device whose driver_id names the driver (devices read model). */
import type Database from 'better-sqlite3';
import type { Projection } from '../projection.js';

export interface DriverRow {
  driver_id: string;
  customer_id: string;
  name: string;
  external_id: string | null;
  created_at: number;
}

export const driversProjection: Projection = {
  name: 'drivers',
  migrate(db) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS drivers (
        driver_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, name TEXT NOT NULL, external_id TEXT, created_at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS drivers_by_customer ON drivers (customer_id, driver_id);
      CREATE INDEX IF NOT EXISTS drivers_by_external_id ON drivers (customer_id, external_id);`);
  },
  prepare(db: Database.Database) {
    const put = db.prepare(
      'INSERT OR REPLACE INTO drivers (driver_id, customer_id, name, external_id, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    return (e) => {
      if (e.type !== 'DriverCreated') return;
      put.run(e.data.driver_id, e.data.customer_id, e.data.name, e.data.external_id, e.data.created_at);
    };
  },
};
