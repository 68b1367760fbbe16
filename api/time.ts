/**
 * Query times. The schema's `date-time` format (ajv-formats) has already refused a naive time
 * (no Z or offset), an impossible day and hour 24. What it accepts and Date.parse cannot read
 * (a leap second, an hour-only offset such as +02) is a 400 at the same pointer.
 */
import { ApiError } from './problem.js';

export function parseTime(value: string, pointer: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new ApiError(400, 'validation_failed', `${pointer}: ${value} is not a time we can read; write it as e.g. 2026-11-22T08:00:00Z or 2026-11-22T10:00:00+02:00`, [
      { pointer, message: 'is not a time we can read' },
    ]);
  }
  return ms;
}

/** A list's optional `from`/`to` window (null: open), `to` after `from`, or a 400 naming the field. */
export function parseWindow(q: { from?: string | undefined; to?: string | undefined }): { from: number | null; to: number | null } {
  const from = q.from === undefined ? null : parseTime(q.from, '/query/from');
  const to = q.to === undefined ? null : parseTime(q.to, '/query/to');
  if (from !== null && to !== null && to <= from) {
    throw new ApiError(400, 'validation_failed', 'to must be after from', [{ pointer: '/query/to', message: 'must be after from' }]);
  }
  return { from, to };
}
