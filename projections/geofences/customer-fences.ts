/**
 * One customer's live geofences for the crossing detector. The R-tree is
 * rebuilt lazily: geofences created since the last build are scanned
 * linearly and deleted ones filtered out until enough changes pile up, so
 * creating thousands of geofences one by one while fixes flow does not
 * rebuild the tree thousands of times.
 */
import { GeofenceIndex, fenceContains, type Fence } from './geofence-index.js';

/** Changes tolerated since the last build before the next query rebuilds the tree. */
const REBUILD_AFTER_CHANGES = 32;

export class CustomerFences {
  private readonly fences = new Map<string, Fence>();
  /** Dwell thresholds in ms, of the geofences that have one. */
  private readonly dwell = new Map<string, number>();
  private index: GeofenceIndex | null = null;
  private indexed = new Set<string>();
  private added: Fence[] = [];
  private removed = 0;

  constructor(initial: Iterable<Fence> = []) {
    for (const f of initial) this.fences.set(f.id, f);
  }

  get size(): number {
    return this.fences.size;
  }

  get(id: string): Fence | undefined {
    return this.fences.get(id);
  }

  dwellMs(id: string): number | null {
    return this.dwell.get(id) ?? null;
  }

  setDwell(id: string, dwellS: number | null | undefined): void {
    if (dwellS === null || dwellS === undefined) this.dwell.delete(id);
    else this.dwell.set(id, dwellS * 1000);
  }

  add(f: Fence): void {
    this.fences.set(f.id, f);
    if (!this.index) return;
    // Back under an id the tree still holds (removed, then re-added): the tree's copy is stale.
    if (this.indexed.has(f.id)) this.index = null;
    else this.added.push(f);
  }

  remove(id: string): void {
    this.dwell.delete(id);
    if (!this.fences.delete(id) || !this.index) return;
    const before = this.added.length;
    this.added = this.added.filter((f) => f.id !== id);
    if (this.added.length === before) this.removed++;
  }

  /** Ids of the live geofences containing the point. */
  containing(lat: number, lng: number): string[] {
    if (this.fences.size === 0) return [];
    if (!this.index || this.added.length + this.removed > REBUILD_AFTER_CHANGES) {
      this.index = new GeofenceIndex([...this.fences.values()]);
      this.indexed = new Set(this.fences.keys());
      this.added = [];
      this.removed = 0;
    }
    let ids = this.index.containing(lat, lng);
    if (this.removed > 0) ids = ids.filter((id) => this.fences.has(id));
    for (const f of this.added) if (fenceContains(f, lat, lng)) ids.push(f.id);
    return ids;
  }
}
