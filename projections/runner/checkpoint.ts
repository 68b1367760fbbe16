/**
 * A runner's checkpoint: the last log position its read models include, kept in their
 * database's `checkpoints` table and written in each batch's transaction.
 */
import type Database from 'better-sqlite3';
import type { LogPosition } from '../../core/event-store/port.js';
import { positionFromString, positionToString } from '../../core/event-store/port.js';

const CHECKPOINT = 'read-models';

/** Reads the position a runner's read models were committed up to, as stored beside them (null: none applied yet). */
export function checkpointReader(db: Database.Database): () => LogPosition | null {
  const read = db.prepare('SELECT position FROM checkpoints WHERE name = ?').pluck();
  return () => {
    const position = read.get(CHECKPOINT) as string | undefined;
    return position === undefined ? null : positionFromString(position);
  };
}

/** Writes the checkpoint; called inside the transaction of the batch it covers. */
export function checkpointWriter(db: Database.Database): (position: LogPosition) => void {
  const save = db.prepare('INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position');
  return (position) => void save.run(CHECKPOINT, positionToString(position));
}
