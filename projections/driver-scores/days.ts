/** UTC days as `YYYY-MM-DD`, the unit of daily scores (docs/api-decisions.md, Conventions). */
const DAY_MS = 86_400_000;

export function dayOf(ms: number): string {
  return new Date(Math.floor(ms / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
}

/** The day `n` days after `day` (negative: before). */
export function addDays(day: string, n: number): string {
  return dayOf(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS);
}

/** Days from `from` (inclusive) to `to` (exclusive). */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d < to; d = addDays(d, 1)) out.push(d);
  return out;
}
