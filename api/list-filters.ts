/**
 * Comma-list query filters shared by the lists (`?kind=` on events,
 * `?event=` and `?state=` on webhook deliveries): values are trimmed, made
 * distinct and sorted, so the same filter always hashes to the same cursor;
 * an unknown value is a 400 pointing at its parameter.
 */
import { matchesKinds } from '../core/webhook-kinds.js';
import { ApiError } from './problem.js';

/** Distinct, sorted; null when the parameter was not sent. */
export function commaList(raw: string | undefined): string[] | null {
  return raw === undefined ? null : [...new Set(raw.split(',').map((s) => s.trim()).filter(Boolean))].sort();
}

function badKind(part: string, pointer: string): ApiError {
  return new ApiError(400, 'validation_failed', `${pointer.split('/').pop()} "${part}" is neither a known kind nor a prefix.* of one (e.g. alarm.*).`, [
    { pointer, message: `unknown kind ${part}` },
  ]);
}

/**
 * Exact kinds and `prefix.*` (or `*`), expanded to the kinds of `known` they
 * match; the pattern grammar is the one webhook endpoints subscribe with
 * (core/webhook-kinds.ts). A part matching none of `known` is refused.
 */
export function parseKindList(raw: string | undefined, known: readonly string[], pointer: string): string[] | null {
  const parts = commaList(raw);
  if (!parts) return null;
  if (parts.length === 0) throw badKind('', pointer);
  const kinds = new Set<string>();
  for (const part of parts) {
    const matched = known.filter((k) => matchesKinds([part], k));
    if (matched.length === 0) throw badKind(part, pointer);
    for (const k of matched) kinds.add(k);
  }
  return [...kinds].sort();
}

/** Values out of a fixed set (delivery states); a value outside it is refused, naming the ones accepted. */
export function parseEnumList<T extends string>(raw: string | undefined, allowed: readonly T[], pointer: string): T[] | null {
  const parts = commaList(raw);
  if (!parts) return null;
  const name = pointer.split('/').pop();
  const unknown = parts.length === 0 ? '' : parts.find((p) => !(allowed as readonly string[]).includes(p));
  if (unknown !== undefined) {
    throw new ApiError(400, 'validation_failed', `${name} "${unknown}" is not one of ${allowed.join(', ')}.`, [
      { pointer, message: `must be one of ${allowed.join(', ')}` },
    ]);
  }
  return parts as T[];
}
