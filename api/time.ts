/** RFC 3339 inputs: a zone (Z or an offset) is required; a naive time is a 400. */
import { ApiError } from './problem.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

export function parseTime(value: string, pointer: string): number {
  const ms = RFC3339.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) {
    throw new ApiError(400, 'validation_failed', `${pointer} must be an RFC 3339 time with Z or an offset, e.g. 2026-11-22T08:00:00Z`, [
      { pointer, message: 'is not an RFC 3339 time with a zone' },
    ]);
  }
  return ms;
}
