/**
 * Trips and stops in the panel: a day's lists (GET /v1/trips, /v1/stops),
 * today's distance and driving time per device for the fleet list, the
 * export links, and a player that moves a marker along a trip's track.
 */
import { all, withQuery, type Span, type Trip } from './api';
import { L } from './map';
import { textElement } from './safe-text';
import { fmtTime, html, nextDay, type TemplateResult } from './ui';

export interface DayReports {
  trips: Trip[];
  stops: Span[];
}

const dayWindow = (day: string) => ({ from: `${day}T00:00:00Z`, to: `${nextDay(day)}T00:00:00Z` });

export async function dayReports(deviceId: string, day: string): Promise<DayReports> {
  const q = { device_id: deviceId, ...dayWindow(day) };
  const [trips, stops] = await Promise.all([all<Trip>('/v1/trips', q, 1000), all<Span>('/v1/stops', q, 1000)]);
  return { trips, stops };
}

/** Distance and driving time of each device's trips started on `day`. */
export async function dayTotals(day: string): Promise<Map<string, { distance_km: number; driving_s: number }>> {
  const totals = new Map<string, { distance_km: number; driving_s: number }>();
  for (const t of await all<Trip>('/v1/trips', dayWindow(day), 20_000)) {
    const sum = totals.get(t.device_id) ?? { distance_km: 0, driving_s: 0 };
    sum.distance_km += t.distance_km;
    sum.driving_s += t.duration_s - t.idle_s;
    totals.set(t.device_id, sum);
  }
  return totals;
}

export function fmtDuration(s: number): string {
  const h = Math.floor(s / 3600);
  const m = Math.round((s % 3600) / 60);
  return h > 0 ? `${h} h ${String(m).padStart(2, '0')} min` : `${m} min`;
}

export const fmtKm = (km: number): string => `${km.toFixed(1)} km`;

/** Files of the day: positions as CSV, GPX and KML, trips and stops as CSV (the session cookie authorises the download). */
export function exportLinks(deviceId: string, day: string): TemplateResult {
  const q = { device_id: deviceId, ...dayWindow(day) };
  const link = (path: string, format: string, label: string) =>
    html`<a class="export" href=${withQuery(path, { ...q, format })} download>${label}</a>`;
  return html`<p class="exports small">Export ${day}: ${link('/v1/positions', 'csv', 'positions CSV')} · ${link('/v1/positions', 'gpx', 'GPX')} ·
    ${link('/v1/positions', 'kml', 'KML')} · ${link('/v1/trips', 'csv', 'trips CSV')} · ${link('/v1/stops', 'csv', 'stops CSV')}</p>`;
}

export function tripList(trips: Trip[], playing: Trip | null, play: (t: Trip) => void): TemplateResult {
  if (!trips.length) return html`<p class="muted">No trips that day.</p>`;
  return html`<ol class="trip-list">
    ${trips.map(
      (t, i) => html`<li data-trip-start=${t.start.time}>
        <div class="row"><strong>Trip ${i + 1}</strong> <span>${fmtKm(t.distance_km)} · ${fmtDuration(t.duration_s)}</span></div>
        <div class="muted small">${fmtTime(t.start.time)} → ${fmtTime(t.end.time)} · max ${Math.round(t.max_speed_kmh)} km/h${t.idle_s ? ` · idle ${fmtDuration(t.idle_s)}` : ''}</div>
        <button type="button" class="link small" aria-pressed=${playing === t ? 'true' : 'false'} @click=${() => play(t)}>
          ${playing === t ? 'Playing' : 'Play'}<span class="visually-hidden"> trip ${i + 1}</span>
        </button>
      </li>`,
    )}
  </ol>`;
}

export function stopList(stops: Span[]): TemplateResult {
  if (!stops.length) return html`<p class="muted">No stops that day.</p>`;
  return html`<ol class="stop-list">
    ${stops.map((s) => html`<li class="small">${fmtTime(s.start)} → ${s.end ? fmtTime(s.end) : 'now'} · ${fmtDuration(s.duration_s)}</li>`)}
  </ol>`;
}

/** Draws the day's trips (green start, red end) and stops (grey) on `layer`. */
export function drawReports(layer: L.LayerGroup, r: DayReports): void {
  for (const s of r.stops) {
    L.circleMarker([s.lat, s.lng], { radius: 7, color: '#5f6b76', fillOpacity: 0.7, className: 'stop-marker' }).bindTooltip(textElement(`Stop · ${fmtDuration(s.duration_s)}`)).addTo(layer);
  }
  for (const t of r.trips) {
    L.circleMarker([t.start.lat, t.start.lng], { radius: 5, color: '#1b7f3b', fillOpacity: 1 }).addTo(layer);
    L.circleMarker([t.end.lat, t.end.lng], { radius: 5, color: '#b3261e', fillOpacity: 1 }).addTo(layer);
  }
}

export interface TrackPoint {
  lat: number;
  lng: number;
  timestamp: string;
}

/**
 * Moves a marker along a trip's points, a point per animation frame step:
 * 200 points take about three seconds whatever the trip's length in time.
 */
export class TripPlayer {
  private marker: L.Marker | null = null;
  private frame = 0;
  private at = 0;

  constructor(
    private readonly map: L.Map,
    private readonly changed: (position: { index: number; of: number; time: string } | null) => void,
  ) {}

  play(points: TrackPoint[]): void {
    this.stop();
    if (!points.length) return;
    this.at = 0;
    const icon = L.divIcon({ className: 'playback-marker', html: '<span></span>', iconSize: [16, 16] });
    this.marker = L.marker([points[0]!.lat, points[0]!.lng], { icon, keyboard: false, interactive: false }).addTo(this.map);
    const step = Math.max(1, Math.round(points.length / 200));
    const tick = () => {
      const p = points[this.at]!;
      this.marker?.setLatLng([p.lat, p.lng]);
      const el = this.marker?.getElement();
      if (el) el.dataset.index = String(this.at);
      this.changed({ index: this.at, of: points.length, time: p.timestamp });
      if (this.at >= points.length - 1) return;
      this.at = Math.min(points.length - 1, this.at + step);
      this.frame = requestAnimationFrame(tick);
    };
    tick();
  }

  stop(): void {
    cancelAnimationFrame(this.frame);
    this.marker?.remove();
    this.marker = null;
    this.changed(null);
  }
}
