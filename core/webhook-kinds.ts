/**
 * Which event kinds an endpoint subscribes to: each pattern is an exact kind
 * (`geofence.enter`), a prefix ending in `.*` that names at least one kind
 * (`alarm.*`, `alarm.dsm.*`), or `*` for every kind. Anything else is refused
 * when the endpoint is saved, so a typo never silently subscribes to nothing.
 * Pure: the endpoint commands validate with it, the projector and the API's filters match with it.
 */
import { EVENT_KINDS, type EventKind } from './alarms.js';

export type KindPattern = { type: 'all' } | { type: 'exact'; kind: EventKind } | { type: 'prefix'; prefix: string };

const KINDS: ReadonlySet<string> = new Set(EVENT_KINDS);

/** The pattern `text` stands for, or null when it is not one (unknown kind, prefix matching no kind, bad wildcard). */
export function parseKindPattern(text: string): KindPattern | null {
  if (text === '*') return { type: 'all' };
  if (KINDS.has(text)) return { type: 'exact', kind: text as EventKind };
  if (!text.endsWith('.*')) return null;
  // Keep the dot: `alarm.*` must not match a future `alarmist.x`.
  const prefix = text.slice(0, -1);
  if (prefix.length < 2 || prefix.includes('*')) return null;
  return EVENT_KINDS.some((k) => k.startsWith(prefix)) ? { type: 'prefix', prefix } : null;
}

function matchesPattern(pattern: KindPattern, kind: string): boolean {
  switch (pattern.type) {
    case 'all':
      return true;
    case 'exact':
      return pattern.kind === kind;
    case 'prefix':
      return kind.startsWith(pattern.prefix);
  }
}

/** The kinds `patterns` select (invalid patterns select nothing). */
export function kindsMatching(patterns: readonly string[]): Set<EventKind> {
  const parsed = patterns.map(parseKindPattern).filter((p): p is KindPattern => p !== null);
  return new Set(EVENT_KINDS.filter((k) => parsed.some((p) => matchesPattern(p, k))));
}

/** True when any of `patterns` selects `kind`. For many calls with the same patterns, use kindsMatching once. */
export function matchesKinds(patterns: readonly string[], kind: string): boolean {
  return patterns.some((text) => {
    const p = parseKindPattern(text);
    return p !== null && matchesPattern(p, kind);
  });
}
