/** Which kinds an endpoint's `events` patterns select: exact kinds, `prefix.*`, or `*`. */
export function matchesKinds(patterns: readonly string[], kind: string): boolean {
  return patterns.some((p) => p === '*' || p === kind || (p.endsWith('.*') && kind.startsWith(p.slice(0, -1))));
}
