/**
 * Pure rules of geofence presence: which geofences a device is inside, since
 * when, which enter/exit crossings a new fix causes, and which stays reach
 * their geofence's dwell threshold.
 */

export interface Presence {
  /** Fix time of the newest fix processed; older fixes are late and ignored. */
  last_fix_time: number;
  /** Geofence id -> fix time of the fix that entered it. */
  inside: Record<string, number>;
  /** Geofences whose `geofence.dwell` this visit raised (sorted): once per visit. */
  dwelt: string[];
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
  if (insideIds.length === 0 && isEmpty(previous)) return { presence: { last_fix_time: fixTime, inside: {}, dwelt: [] }, crossings: [] };
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
  return { presence: { last_fix_time: fixTime, inside, dwelt: before?.dwelt ?? [] }, crossings: [...exits.sort(byId), ...enters.sort(byId)] };
}

export interface DwellReached {
  geofence_id: string;
  /** When the visit began (the entering fix's time): with the device and geofence, what names it. */
  entered_at: number;
  dwell_ms: number;
}

/**
 * After a step: the geofences the device has now stayed in continuously for
 * at least their dwell threshold (`thresholdMs`, null: none) and whose dwell
 * this visit has not raised yet, in id order. Decided at fixes, so it is
 * raised at the first fix at or after the threshold; a visit that ends (an
 * exit, the geofence deleted) forgets it, and the next visit may raise again.
 * A threshold set or lowered during a visit already past it raises at the next fix.
 */
export function stepDwell(presence: Presence, thresholdMs: (geofenceId: string) => number | null): { presence: Presence; reached: DwellReached[] } {
  const { inside, last_fix_time: now } = presence;
  if (isEmpty(inside)) return { presence: presence.dwelt.length === 0 ? presence : { ...presence, dwelt: [] }, reached: [] };
  const dwelt = presence.dwelt.filter((id) => inside[id] !== undefined);
  const reached: DwellReached[] = [];
  for (const id of Object.keys(inside).sort()) {
    const threshold = thresholdMs(id);
    const since = inside[id]!;
    if (threshold === null || now - since < threshold || dwelt.includes(id)) continue;
    reached.push({ geofence_id: id, entered_at: since, dwell_ms: now - since });
    dwelt.push(id);
  }
  return { presence: { ...presence, dwelt: dwelt.sort() }, reached };
}

function isEmpty(inside: Presence['inside']): boolean {
  for (const _ in inside) return false;
  return true;
}
