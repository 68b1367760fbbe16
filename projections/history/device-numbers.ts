/**
 * The numbers the history's key gives devices (key.ts): one per device, given
 * by the history's database the first time one of its fixes is applied and
 * never changed, so pages read the number with the rows it keys. The writer
 * remembers the numbers it has read or given, and forgets them all when a
 * batch rolls back (a number given in it is gone with it).
 */
import type Database from 'better-sqlite3';
import { HISTORY_MAX_DEVICES } from './key.js';

export const CREATE_HISTORY_DEVICES = 'CREATE TABLE IF NOT EXISTS history_devices (num INTEGER PRIMARY KEY, device_id TEXT NOT NULL UNIQUE)';

export interface DeviceNumbers {
  /** The device's number, given now if it has none; null when the history keys no more devices. */
  of(deviceId: string): number | null;
  /** The batch's transaction rolled back. */
  forget(): void;
}

export function deviceNumbers(db: Database.Database): DeviceNumbers {
  const read = db.prepare('SELECT num FROM history_devices WHERE device_id = ?').pluck();
  const give = db.prepare('INSERT INTO history_devices (device_id) VALUES (?) RETURNING num').pluck();
  const drop = db.prepare('DELETE FROM history_devices WHERE num = ?');
  const known = new Map<string, number | null>();
  return {
    of(deviceId) {
      const remembered = known.get(deviceId);
      if (remembered !== undefined) return remembered;
      let num: number | null = (read.get(deviceId) as number | undefined) ?? (give.get(deviceId) as number);
      if (num > HISTORY_MAX_DEVICES) {
        // No number past the key's: the device stays out of the history rather than spill into another's block.
        drop.run(num);
        num = null;
      }
      known.set(deviceId, num);
      return num;
    },
    forget() {
      known.clear();
    },
  };
}
