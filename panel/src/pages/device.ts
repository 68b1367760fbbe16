/**
 * A device: its details, its track for a chosen UTC day (GET /v1/positions,
 * every page), that day's trips and stops (on the map and in lists, a trip
 * played back along its track), the events of that day (GET /v1/events),
 * the day's exports, its live position, and its commands (device-commands.ts).
 */
import { all, get, type Device, type FleetEvent } from '../api';
import { subscribe } from '../live';
import { autoZoom, createMap, deviceMarker, L, moveMarker } from '../map';
import { setQuery, type Mount } from '../router';
import { textElement } from '../safe-text';
import { errorBox, fmtTime, html, kindLabel, nextDay, render, today } from '../ui';
import { mountCommands } from './device-commands';
import { deviceLabel } from './fleet';
import { dayReports, drawReports, exportLinks, stopList, tripList, TripPlayer, type DayReports } from '../reports';
import type { Trip } from '../api';

interface TrackPoint {
  lat: number;
  lng: number;
  speed_kmh: number | null;
  timestamp: string;
}

export const mount: Mount = async (el, params, query) => {
  const id = params.id!;
  let device: Device | null = null;
  let day = query.get('day') ?? today();
  let track: TrackPoint[] = [];
  let events: FleetEvent[] = [];
  let reports: DayReports = { trips: [], stops: [] };
  let playing: Trip | null = null;
  let playback: { index: number; of: number; time: string } | null = null;
  let error: unknown = null;
  let loading = true;

  const draw = () =>
    render(
      html`
        <div class="split">
          <section class="side" aria-labelledby="device-title">
            <p><a href="/fleet">← Fleet</a></p>
            <h1 id="device-title">${device ? deviceLabel(device) : 'Device'}</h1>
            ${device
              ? html`<dl class="facts">
                  <dt>Status</dt><dd><span class=${`badge status-${device.status}`}>${device.status.replace('_', ' ')}</span></dd>
                  <dt>IMEI</dt><dd>${device.imei}</dd>
                  <dt>Model</dt><dd>${device.model}</dd>
                  <dt>Driver</dt><dd>${device.driver ? html`<a href=${`/drivers/${device.driver.id}`}>${device.driver.name}</a>` : '—'}</dd>
                  <dt>Last seen</dt><dd>${fmtTime(device.last_seen_at)}</dd>
                </dl>`
              : ''}
            <form class="filters" @submit=${(e: Event) => e.preventDefault()}>
              <div class="field">
                <label for="track-day">Day (UTC)</label>
                <input id="track-day" type="date" .value=${day} max=${today()}
                  @change=${(e: Event) => {
                    const v = (e.target as HTMLInputElement).value;
                    if (v) {
                      day = v;
                      setQuery(new URLSearchParams({ day }));
                      void loadDay();
                    }
                  }} />
              </div>
            </form>
            ${errorBox(error)}
            <p class="muted" role="status">${loading ? 'Loading…' : `${track.length} positions, ${reports.trips.length} trips, ${events.length} events on ${day}`}</p>
            ${exportLinks(id, day)}
            <h2>Trips</h2>
            ${tripList(reports.trips, playing, (t) => togglePlay(t))}
            ${playback
              ? html`<p class="playback small" role="status">Playing: ${fmtTime(playback.time)}
                  <progress max=${playback.of - 1} .value=${playback.index} aria-label="Playback position"></progress></p>`
              : ''}
            <h2>Stops</h2>
            ${stopList(reports.stops)}
            <h2>Events</h2>
            ${events.length
              ? html`<ul class="event-list">
                  ${events.map((e) => html`<li><a href=${`/events/${e.id}`}>${kindLabel(e.kind)}</a> <span class=${`badge sev-${e.severity}`}>${e.severity}</span><br /><span class="muted small">${fmtTime(e.occurred_at)}</span></li>`)}
                </ul>`
              : html`<p class="muted">No events that day.</p>`}
            <section id="device-commands" aria-label="Commands"></section>
          </section>
          <div class="map" id="device-map"></div>
        </div>
      `,
      el,
    );

  draw();
  const map = await createMap(el.querySelector<HTMLElement>('#device-map')!, 'Map of the device and its track');
  const trackLayer = L.layerGroup().addTo(map);
  let marker: L.Marker | null = null;
  const player = new TripPlayer(map, (position) => {
    playback = position;
    draw();
  });
  /** Plays the trip along the day's track between its start and end, or stops it when it is playing. */
  const togglePlay = (t: Trip) => {
    if (playing === t) {
      playing = null;
      player.stop();
      return;
    }
    playing = t;
    const from = Date.parse(t.start.time);
    const to = Date.parse(t.end.time);
    player.play(track.filter((p) => Date.parse(p.timestamp) >= from && Date.parse(p.timestamp) <= to));
  };

  const loadDay = async () => {
    loading = true;
    error = null;
    draw();
    try {
      const from = `${day}T00:00:00Z`;
      const to = `${nextDay(day)}T00:00:00Z`;
      playing = null;
      player.stop();
      [track, events, reports] = await Promise.all([
        all<TrackPoint>('/v1/positions', { device_id: id, from, to, order: 'asc' }, 20_000),
        all<FleetEvent>('/v1/events', { device_id: id, from, to }, 1000),
        dayReports(id, day),
      ]);
    } catch (err) {
      error = err;
    }
    loading = false;
    trackLayer.clearLayers();
    if (track.length) {
      const line = L.polyline(track.map((p) => [p.lat, p.lng] as [number, number]), { color: '#1f5fbf', weight: 4 }).addTo(trackLayer);
      map.fitBounds(line.getBounds(), { padding: [30, 30], maxZoom: Math.max(autoZoom, 10), animate: false });
    }
    drawReports(trackLayer, reports);
    for (const e of events) {
      if (!e.position) continue;
      L.circleMarker([e.position.lat, e.position.lng], { radius: 6, color: '#b3261e', fillOpacity: 0.9 })
        .bindTooltip(textElement(`${kindLabel(e.kind)} · ${fmtTime(e.occurred_at)}`))
        .addTo(trackLayer);
    }
    draw();
  };

  try {
    device = await get<Device>(`/v1/devices/${encodeURIComponent(id)}`);
    const p = device.latest_position;
    if (p) {
      marker = deviceMarker(device.id, deviceLabel(device), p.lat, p.lng, device.status).addTo(map);
      map.setView([p.lat, p.lng], autoZoom, { animate: false });
    }
  } catch (err) {
    error = err;
  }
  await loadDay();
  const stopCommands = device ? mountCommands(el.querySelector<HTMLElement>('#device-commands')!, id) : () => {};

  const unsubscribe = subscribe({
    position: (p) => {
      if (p.device_id !== id || !device) return;
      if (marker) moveMarker(marker, id, p.lat, p.lng);
      else marker = deviceMarker(id, deviceLabel(device), p.lat, p.lng, 'online').addTo(map);
      if (day === today()) {
        track.push(p);
        trackLayer.eachLayer((l) => {
          if (l instanceof L.Polyline && !(l instanceof L.Polygon)) l.addLatLng([p.lat, p.lng]);
        });
      }
    },
  });
  return () => {
    unsubscribe();
    stopCommands();
    player.stop();
    map.remove();
  };
};
