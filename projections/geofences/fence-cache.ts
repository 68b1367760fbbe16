/**
 * Each customer's live geofences, compiled from the geofences table on first
 * use and kept in step with the log afterwards: whoever holds one calls
 * `created` and `deleted` for the events it sees, in log order, so what it
 * tests a fix against is the set of geofences of that point of the log (the
 * table is the geofences projection's, which the runner applies first).
 */
import type Database from 'better-sqlite3';
import type { GeofenceCreated, GeofenceUpdated } from '../../core/events.js';
import { CustomerFences } from './customer-fences.js';
import { compileFence } from './geofence-index.js';

export class FenceCache {
  private readonly cache = new Map<string, CustomerFences>();
  private readonly ofCustomer: Database.Statement;

  constructor(db: Database.Database) {
    this.ofCustomer = db.prepare('SELECT geofence_id, name, geometry, dwell_s FROM geofences WHERE customer_id = ? ORDER BY geofence_id');
  }

  of(customerId: string): CustomerFences {
    let set = this.cache.get(customerId);
    if (!set) {
      const rows = this.ofCustomer.all(customerId) as Array<{ geofence_id: string; name: string; geometry: string; dwell_s: number | null }>;
      set = new CustomerFences(
        rows.map((r) => compileFence(r.geofence_id, r.name, (JSON.parse(r.geometry) as GeofenceCreated['data']['geometry']).coordinates)),
      );
      for (const r of rows) set.setDwell(r.geofence_id, r.dwell_s);
      this.cache.set(customerId, set);
    }
    return set;
  }

  created(g: GeofenceCreated['data']): void {
    const set = this.cache.get(g.customer_id);
    set?.add(compileFence(g.geofence_id, g.name, g.geometry.coordinates));
    set?.setDwell(g.geofence_id, g.dwell_s);
  }

  dwellSet(u: GeofenceUpdated['data']): void {
    this.cache.get(u.customer_id)?.setDwell(u.geofence_id, u.dwell_s);
  }

  deleted(customerId: string, geofenceId: string): void {
    this.cache.get(customerId)?.remove(geofenceId);
  }

  /** Ids of the customer's geofences containing the point, in id order (the index's order depends on how it was built). */
  containing(customerId: string, lat: number, lng: number): string[] {
    const set = this.of(customerId);
    return set.size === 0 ? [] : set.containing(lat, lng).sort();
  }
}
