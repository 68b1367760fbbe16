/**
 * Fleet: every device on the live map (GET /v1/devices, then `position`
 * messages of /v1/stream move the markers), and the device list with status,
 * search and filters.
 */
import { all, get, type Device } from '../api';
import { subscribe } from '../live';
import { autoZoom, createMap, deviceMarker, L, moveMarker, type DeviceStatus } from '../map';
import { setQuery, type Mount } from '../router';
import { templateElement } from '../safe-text';
import { errorBox, fmtAgo, html, render, today, type TemplateResult } from '../ui';
import { dayTotals, fmtDuration, fmtKm } from '../reports';

const STATUS_LABEL: Record<DeviceStatus, string> = { online: 'Online', offline: 'Offline', never_connected: 'Never connected' };

export const deviceLabel = (d: { name: string | null; imei: string }): string => d.name ?? d.imei;

const popupOf = (d: Device): TemplateResult =>
  html`<strong>${deviceLabel(d)}</strong><br />${STATUS_LABEL[d.status]} · ${d.latest_position?.speed_kmh ?? '—'} km/h<br /><a href=${`/devices/${d.id}`}>Open device</a>`;

export const mount: Mount = async (el, _params, query) => {
  let devices: Device[] = [];
  let totals = new Map<string, { distance_km: number; driving_s: number }>();
  let error: unknown = null;
  let search = query.get('q') ?? '';
  let status = query.get('status') ?? '';
  let group = query.get('group') ?? '';
  const markers = new Map<string, L.Marker>();

  const visible = () => {
    const q = search.trim().toLowerCase();
    return devices.filter(
      (d) =>
        (!status || d.status === status) &&
        (!group || d.group_id === group) &&
        (!q || deviceLabel(d).toLowerCase().includes(q) || d.imei.includes(q) || (d.driver?.name.toLowerCase().includes(q) ?? false)),
    );
  };

  const filtersChanged = () => {
    const p = new URLSearchParams();
    if (search) p.set('q', search);
    if (status) p.set('status', status);
    if (group) p.set('group', group);
    setQuery(p);
    draw();
    syncMarkers();
  };

  const focusDevice = (d: Device) => {
    const m = markers.get(d.id);
    if (!m || !map) return;
    map.setView(m.getLatLng(), Math.max(map.getZoom(), autoZoom));
    m.openPopup();
  };

  const draw = () => {
    const shown = visible();
    const groups = [...new Set(devices.map((d) => d.group_id).filter((g): g is string => !!g))].sort();
    render(
      html`
        <div class="split">
          <section class="side" aria-labelledby="fleet-title">
            <h1 id="fleet-title">Fleet</h1>
            <form class="filters" role="search" @submit=${(e: Event) => e.preventDefault()}>
              <div class="field">
                <label for="device-search">Search</label>
                <input id="device-search" type="search" placeholder="Name, IMEI or driver" .value=${search}
                  @input=${(e: Event) => ((search = (e.target as HTMLInputElement).value), filtersChanged())} />
              </div>
              <div class="field">
                <label for="status-filter">Status</label>
                <select id="status-filter" @change=${(e: Event) => ((status = (e.target as HTMLSelectElement).value), filtersChanged())}>
                  <option value="" ?selected=${!status}>Any</option>
                  ${(Object.keys(STATUS_LABEL) as DeviceStatus[]).map((s) => html`<option value=${s} ?selected=${status === s}>${STATUS_LABEL[s]}</option>`)}
                </select>
              </div>
              ${groups.length
                ? html`<div class="field">
                    <label for="group-filter">Group</label>
                    <select id="group-filter" @change=${(e: Event) => ((group = (e.target as HTMLSelectElement).value), filtersChanged())}>
                      <option value="" ?selected=${!group}>Any</option>
                      ${groups.map((g) => html`<option value=${g} ?selected=${group === g}>${g}</option>`)}
                    </select>
                  </div>`
                : ''}
            </form>
            ${errorBox(error)}
            <p class="muted" role="status">${shown.length} of ${devices.length} devices</p>
            <ul class="device-list">
              ${shown.map(
                (d) => html`<li data-device-id=${d.id}>
                  <div class="row">
                    <a href=${`/devices/${d.id}`} class="name">${deviceLabel(d)}</a>
                    <span class=${`badge status-${d.status}`}>${STATUS_LABEL[d.status]}</span>
                  </div>
                  <div class="row muted small">
                    <span>${d.latest_position?.speed_kmh != null ? `${Math.round(d.latest_position.speed_kmh)} km/h` : '—'}</span>
                    <span>${d.driver ? d.driver.name : 'No driver'}</span>
                    <span>seen ${fmtAgo(d.last_seen_at)}</span>
                  </div>
                  ${totals.has(d.id)
                    ? html`<div class="muted small today">Today ${fmtKm(totals.get(d.id)!.distance_km)} · driving ${fmtDuration(totals.get(d.id)!.driving_s)}</div>`
                    : ''}
                  ${d.latest_position ? html`<button type="button" class="link small" @click=${() => focusDevice(d)}>Show on map<span class="visually-hidden"> ${deviceLabel(d)}</span></button>` : ''}
                </li>`,
              )}
            </ul>
          </section>
          <div class="map" id="fleet-map"></div>
        </div>
      `,
      el,
    );
  };

  draw();
  const map = await createMap(el.querySelector<HTMLElement>('#fleet-map')!, 'Map of the fleet');

  const syncMarkers = () => {
    const shown = new Set(visible().map((d) => d.id));
    for (const d of devices) {
      const p = d.latest_position;
      let m = markers.get(d.id);
      if (!p) continue;
      if (!m) {
        m = deviceMarker(d.id, deviceLabel(d), p.lat, p.lng, d.status);
        // Built each time it opens, from the device's latest status and speed.
        m.bindPopup(() => templateElement(popupOf(devices.find((x) => x.id === d.id) ?? d)));
        markers.set(d.id, m);
      }
      if (shown.has(d.id)) m.addTo(map);
      else m.remove();
    }
  };

  try {
    [devices, totals] = await Promise.all([all<Device>('/v1/devices'), dayTotals(today())]);
  } catch (err) {
    error = err;
  }
  draw();
  syncMarkers();
  const located = devices.filter((d) => d.latest_position).map((d) => [d.latest_position!.lat, d.latest_position!.lng] as [number, number]);
  if (located.length === 1) map.setView(located[0]!, autoZoom, { animate: false });
  else if (located.length > 1) map.fitBounds(L.latLngBounds(located), { padding: [30, 30], maxZoom: autoZoom, animate: false });

  let pending = false;
  const fetching = new Set<string>();
  const unsubscribe = subscribe({
    position: (p) => {
      const d = devices.find((x) => x.id === p.device_id);
      if (!d) {
        // A device registered since the page opened: fetch it once, then it is followed like the others.
        if (!fetching.has(p.device_id)) {
          fetching.add(p.device_id);
          void get<Device>(`/v1/devices/${encodeURIComponent(p.device_id)}`)
            .then((dev) => {
              if (!devices.some((x) => x.id === dev.id)) devices.push(dev);
              syncMarkers();
              draw();
            })
            .catch(() => fetching.delete(p.device_id));
        }
        return;
      }
      d.latest_position = { lat: p.lat, lng: p.lng, speed_kmh: p.speed_kmh, heading_deg: p.heading_deg, timestamp: p.timestamp, ignition: null };
      d.status = 'online';
      d.last_seen_at = new Date().toISOString();
      const m = markers.get(d.id);
      if (m) moveMarker(m, d.id, p.lat, p.lng);
      else syncMarkers();
      if (!pending) {
        pending = true;
        requestAnimationFrame(() => {
          pending = false;
          draw();
        });
      }
    },
  });
  // Devices registered after the page was opened: picked up on the next visit; positions of known ones are live.
  return () => {
    unsubscribe();
    map.remove();
  };
};
