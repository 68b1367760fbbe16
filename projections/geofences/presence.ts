/**
 * Pure rules of geofence presence: which geofences a device is inside, since
 * when, and which enter/exit crossings a new fix causes.
 */

export interface Presence {
  /** Fix time of the newest fix processed; older fixes are late and ignored. */
  last_fix_time: number;
  /** Geofence id -> fix time of the fix that entered it. */
  inside: Record<string, number>;
}

export interface Crossing {
  direction: 'enter' | 'exit';
  geofence_id: string;
  /** For exits: how long the device was inside, in ms. */
  dwell_ms: number | null;
}

export interface PresenceStep {
  presence: Presence;
  /** Exits first (leaving A before entering B), each group in id order, so replays emit the same sequence. */
  crossings: Crossing[];
}

/**
 * The next presence after a valid fix at `fixTime`, or null when the fix is
 * not newer than the last processed one: a late fix must not move a device
 * back in time (that would invent an exit and an enter that never happened).
 * `insideNow` is only called for fixes that count. Geofences the device was in
 * that `isLive` no longer knows were deleted: they leave the set silently.
 */
export function stepPresence(
  before: Presence | null,
  fixTime: number,
  insideNow: () => readonly string[],
  isLive: (geofenceId: string) => boolean,
): PresenceStep | null {
  if (before && fixTime <= before.last_fix_time) return null;
  const previous = before?.inside ?? {};
  const insideIds = insideNow();
  // Most fixes are of a device outside every geofence, as it was: nothing to compare or sort.
  if (insideIds.length === 0 && isEmpty(previous)) return { presence: { last_fix_time: fixTime, inside: {} }, crossings: [] };
  const now = new Set(insideIds);
  const inside: Record<string, number> = {};
  const exits: Crossing[] = [];
  const enters: Crossing[] = [];
  for (const [id, since] of Object.entries(previous)) {
    if (now.has(id)) inside[id] = since;
    else if (isLive(id)) exits.push({ direction: 'exit', geofence_id: id, dwell_ms: fixTime - since });
  }
  for (const id of now) {
    if (previous[id] === undefined) {
      inside[id] = fixTime;
      enters.push({ direction: 'enter', geofence_id: id, dwell_ms: null });
    }
  }
  const byId = (a: Crossing, b: Crossing) => (a.geofence_id < b.geofence_id ? -1 : a.geofence_id > b.geofence_id ? 1 : 0);
  return { presence: { last_fix_time: fixTime, inside }, crossings: [...exits.sort(byId), ...enters.sort(byId)] };
}

function isEmpty(inside: Presence['inside']): boolean {
  for (const _ in inside) return false;
  return true;
}
