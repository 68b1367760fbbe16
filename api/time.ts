/** RFC 3339 inputs: a zone (Z or an offset) is required; a naive time is a 400. */
import { ApiError } from './problem.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** Days in each month of a common year; February gains one in leap years. */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The number of the two digits at `at` (the regex has made sure they are digits). */
function twoDigits(s: string, at: number): number {
  return (s.charCodeAt(at) - 48) * 10 + s.charCodeAt(at + 1) - 48;
}

/**
 * Date.parse rolls an impossible day over (2026-02-30 is March 2nd) and takes
 * hour 24; RFC 3339 has neither. Date.parse already refuses months, days over
 * 31, minutes and seconds out of range.
 */
function isCalendarTime(s: string): boolean {
  const month = twoDigits(s, 5);
  const day = twoDigits(s, 8);
  if (twoDigits(s, 11) > 23) return false;
  if (month !== 2) return day <= MONTH_DAYS[month - 1]!;
  const year = twoDigits(s, 0) * 100 + twoDigits(s, 2);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (leap ? 29 : 28);
}

export function parseTime(value: string, pointer: string): number {
  const ms = RFC3339.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) {
    throw new ApiError(400, 'validation_failed', `${pointer} must be an RFC 3339 time with Z or an offset, e.g. 2026-11-22T08:00:00Z`, [
      { pointer, message: 'is not an RFC 3339 time with a zone' },
    ]);
  }
  if (!isCalendarTime(value)) {
    throw new ApiError(400, 'validation_failed', `${pointer}: ${value} is not a real date and time (no such day in that month, or hour over 23)`, [
      { pointer, message: 'is not a real date and time' },
    ]);
  }
  return ms;
}
