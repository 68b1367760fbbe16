/** The position history's rows, in the order of its key, with what the key holds spelled out (projections/history/key.ts). */
import type Database from 'better-sqlite3';
import { keyDeviceNumberSql, keyFixTimeSql, keySlotSql } from '../../projections/history/key.js';

export interface HistoryRow {
  device_id: string;
  fix_time: number;
  slot: number;
  event_id: string;
  customer_id: string;
  item: string;
}

export function historyRows(db: Database.Database): HistoryRow[] {
  return db
    .prepare(
      `SELECT d.device_id, ${keyFixTimeSql('p.k')} AS fix_time, ${keySlotSql('p.k')} AS slot, p.event_id, p.customer_id, p.item
       FROM positions p JOIN history_devices d ON d.num = ${keyDeviceNumberSql('p.k')} ORDER BY p.k`,
    )
    .all() as HistoryRow[];
}
