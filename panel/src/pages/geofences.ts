/**
 * Geofences: every geofence on the map; draw a circle or a polygon
 * (Leaflet-Geoman's toolbar, or a circle typed in by coordinates), name it,
 * save it (POST /v1/geofences); delete one after a confirmation (permanent).
 */
import '../geoman';
import { all, del, post, type Geofence } from '../api';
import { autoZoom, createMap, L } from '../map';
import type { Mount } from '../router';
import { textElement } from '../safe-text';
import { confirmDialog, errorBox, fmtTime, html, render } from '../ui';

type Draft = { kind: 'polygon'; geometry: GeoJSON.Polygon; layer: L.Layer | null } | { kind: 'circle'; center: { lat: number; lng: number }; radius_m: number; layer: L.Layer | null };

export const mount: Mount = async (el) => {
  let fences: Geofence[] = [];
  let error: unknown = null;
  let draft: Draft | null = null;
  let saving = false;
  let status = '';

  const saveDraft = async (e: SubmitEvent) => {
    e.preventDefault();
    if (!draft) return;
    const form = new FormData(e.target as HTMLFormElement);
    const name = String(form.get('name') ?? '').trim();
    const dwellMin = String(form.get('dwell_min') ?? '').trim();
    const dwell = dwellMin === '' ? {} : { dwell_s: Math.round(Number(dwellMin) * 60) };
    saving = true;
    error = null;
    draw();
    try {
      const shape = draft.kind === 'polygon' ? { geometry: draft.geometry } : { center: draft.center, radius_m: draft.radius_m };
      const body = { name, ...shape, ...dwell };
      const created = await post<Geofence>('/v1/geofences', body);
      draft.layer?.remove();
      draft = null;
      status = `Geofence “${created.name}” saved.`;
      await reload();
    } catch (err) {
      error = err;
    }
    saving = false;
    draw();
  };

  const cancelDraft = () => {
    draft?.layer?.remove();
    draft = null;
    draw();
  };

  const remove = async (f: Geofence) => {
    const ok = await confirmDialog('Delete geofence', `Delete “${f.name}”? This is permanent: crossings stop being detected and it cannot be restored.`, 'Delete permanently');
    if (!ok) return;
    try {
      await del(`/v1/geofences/${encodeURIComponent(f.id)}`);
      status = `Geofence “${f.name}” deleted.`;
      await reload();
    } catch (err) {
      error = err;
    }
    draw();
  };

  const typedCircle = (e: SubmitEvent) => {
    e.preventDefault();
    const data = new FormData(e.target as HTMLFormElement);
    const lat = Number(data.get('lat'));
    const lng = Number(data.get('lng'));
    const radius = Number(data.get('radius'));
    draft?.layer?.remove();
    const layer = L.circle([lat, lng], { radius }).addTo(map);
    map.fitBounds(layer.getBounds());
    draft = { kind: 'circle', center: { lat, lng }, radius_m: radius, layer };
    draw();
    el.querySelector<HTMLInputElement>('#geofence-name')?.focus();
  };

  const draw = () =>
    render(
      html`
        <div class="split">
          <section class="side" aria-labelledby="geofences-title">
            <h1 id="geofences-title">Geofences</h1>
            <p class="muted">Draw a polygon or a circle with the tools on the map, then name it. Or type a circle below.</p>
            ${draft
              ? html`<form class="card draft" @submit=${saveDraft} aria-label="New geofence">
                  <h2>New ${draft.kind}</h2>
                  <label for="geofence-name">Name</label>
                  <input id="geofence-name" name="name" required maxlength="200" autocomplete="off" />
                  <label for="geofence-dwell">Dwell alert after (minutes, optional)</label>
                  <input id="geofence-dwell" name="dwell_min" type="number" min="1" max="10080" step="1" autocomplete="off" />
                  <div class="actions">
                    <button type="button" @click=${cancelDraft}>Discard</button>
                    <button type="submit" class="primary" ?disabled=${saving}>Save geofence</button>
                  </div>
                </form>`
              : ''}
            ${errorBox(error)}
            <p class="muted" role="status">${status}</p>
            <ul class="fence-list">
              ${fences.map(
                (f) => html`<li data-geofence-id=${f.id}>
                  <div class="row"><strong>${f.name}</strong><span class="badge">${f.shape}</span></div>
                  <div class="row muted small">
                    <span>${f.shape === 'circle' ? `radius ${Math.round(f.radius_m ?? 0)} m` : `${(f.geometry.coordinates[0]?.length ?? 1) - 1} vertices`}</span>
                    ${f.dwell_s ? html`<span>dwell alert after ${Math.round(f.dwell_s / 60)} min</span>` : ''}
                    <span>${fmtTime(f.created_at)}</span>
                  </div>
                  <div class="row">
                    <button type="button" class="link small" @click=${() => showFence(f)}>Show on map<span class="visually-hidden"> ${f.name}</span></button>
                    <button type="button" class="link small danger" @click=${() => remove(f)}>Delete<span class="visually-hidden"> ${f.name}</span></button>
                  </div>
                </li>`,
              )}
            </ul>
            ${fences.length ? '' : html`<p class="muted">No geofences yet.</p>`}
            <details>
              <summary>Add a circle by coordinates</summary>
              <form class="filters" @submit=${typedCircle}>
                <div class="field"><label for="c-lat">Centre latitude</label><input id="c-lat" name="lat" type="number" step="any" min="-90" max="90" required /></div>
                <div class="field"><label for="c-lng">Centre longitude</label><input id="c-lng" name="lng" type="number" step="any" min="-180" max="180" required /></div>
                <div class="field"><label for="c-radius">Radius (m)</label><input id="c-radius" name="radius" type="number" min="1" step="any" required /></div>
                <button type="submit">Preview</button>
              </form>
            </details>
          </section>
          <div class="map" id="geofence-map"></div>
        </div>
      `,
      el,
    );

  draw();
  const map = await createMap(el.querySelector<HTMLElement>('#geofence-map')!, 'Map of the geofences, with drawing tools');
  const saved = L.layerGroup().addTo(map);
  const layers = new Map<string, L.Layer>();

  const showFence = (f: Geofence) => {
    const l = layers.get(f.id);
    if (l instanceof L.Polygon || l instanceof L.Circle) map.fitBounds(l.getBounds(), { maxZoom: 16 });
  };

  const reload = async () => {
    fences = await all<Geofence>('/v1/geofences');
    saved.clearLayers();
    layers.clear();
    for (const f of fences) {
      const layer =
        f.shape === 'circle' && f.center && f.radius_m
          ? L.circle([f.center.lat, f.center.lng], { radius: f.radius_m, color: '#1f7a4d', pmIgnore: true })
          : L.polygon(f.geometry.coordinates[0]!.map(([lng, lat]) => [lat!, lng!] as [number, number]), { color: '#1f7a4d', pmIgnore: true });
      layer.bindTooltip(textElement(f.name)).addTo(saved);
      layers.set(f.id, layer);
    }
  };

  map.pm.addControls({
    position: 'topleft',
    drawMarker: false,
    drawCircleMarker: false,
    drawPolyline: false,
    drawRectangle: false,
    drawText: false,
    drawPolygon: true,
    drawCircle: true,
    editMode: false,
    dragMode: false,
    cutPolygon: false,
    removalMode: false,
    rotateMode: false,
  });
  // Geoman's toolbar buttons take focus (role=button) but only clicks: Enter and Space press them too.
  el.querySelector('#geofence-map')!.addEventListener('keydown', (e) => {
    const ev = e as KeyboardEvent;
    const button = (ev.target as HTMLElement).closest('.leaflet-pm-toolbar [role="button"]');
    if (button && (ev.key === 'Enter' || ev.key === ' ')) {
      ev.preventDefault();
      (button as HTMLElement).click();
    }
  });
  map.on('pm:create', (e) => {
    draft?.layer?.remove();
    const layer = e.layer;
    if (layer instanceof L.Circle) {
      const c = layer.getLatLng();
      draft = { kind: 'circle', center: { lat: c.lat, lng: c.lng }, radius_m: layer.getRadius(), layer };
    } else if (layer instanceof L.Polygon) {
      draft = { kind: 'polygon', geometry: layer.toGeoJSON().geometry as GeoJSON.Polygon, layer };
    } else {
      layer.remove();
      return;
    }
    status = '';
    draw();
    el.querySelector<HTMLInputElement>('#geofence-name')?.focus();
  });

  try {
    await reload();
    const bounds = L.featureGroup([...layers.values()]).getBounds();
    if (bounds.isValid()) map.fitBounds(bounds, { padding: [20, 20], maxZoom: Math.max(autoZoom, 10), animate: false });
  } catch (err) {
    error = err;
  }
  draw();
  return () => map.remove();
};
