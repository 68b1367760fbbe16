/** One event: GET /v1/events/{id}, its position on the map, its context (rule, thresholds, raw fields) and media. */
import { get, type EventDetail } from '../api';
import { autoZoom, createMap, L } from '../map';
import type { Mount } from '../router';
import { linkHref, textElement } from '../safe-text';
import { errorBox, fmtTime, html, kindLabel, render } from '../ui';

const BASE_FIELDS = new Set(['id', 'kind', 'severity', 'occurred_at', 'device_id', 'device_name', 'driver_id', 'source', 'position', 'context', 'media']);

function value(v: unknown): string {
  return typeof v === 'object' && v !== null ? JSON.stringify(v, null, 2) : String(v);
}

/** One medium of the event: a link only to an http(s) URL (linkHref). */
const mediaItem = (label: string, href: string | null) =>
  html`<li>${label}${href ? html` — <a href=${href} data-external target="_blank" rel="noopener noreferrer">open</a>` : ''}</li>`;

export const mount: Mount = async (el, params) => {
  let event: EventDetail | null = null;
  let error: unknown = null;
  try {
    event = await get<EventDetail>(`/v1/events/${encodeURIComponent(params.id!)}`);
  } catch (err) {
    error = err;
  }
  const e = event;
  const fields = e ? Object.entries(e).filter(([k, v]) => !BASE_FIELDS.has(k) && v !== null && v !== undefined) : [];
  render(
    html`
      <div class="split">
        <section class="side" aria-labelledby="event-title">
          <p><a href="/events">← Events</a></p>
          <h1 id="event-title">${e ? kindLabel(e.kind) : 'Event'}</h1>
          ${errorBox(error)}
          ${e
            ? html`
                <dl class="facts">
                  <dt>Severity</dt><dd><span class=${`badge sev-${e.severity}`}>${e.severity}</span></dd>
                  <dt>When</dt><dd>${fmtTime(e.occurred_at)}</dd>
                  <dt>Device</dt><dd><a href=${`/devices/${e.device_id}`}>${e.device_name ?? e.device_id}</a></dd>
                  <dt>Driver</dt><dd>${e.driver_id ? html`<a href=${`/drivers/${e.driver_id}`}>${e.driver_id}</a>` : '—'}</dd>
                  <dt>Source</dt><dd>${e.source}</dd>
                  <dt>Position</dt><dd>${e.position ? `${e.position.lat.toFixed(5)}, ${e.position.lng.toFixed(5)} · ${e.position.speed_kmh ?? '—'} km/h` : '—'}</dd>
                  ${fields.map(([k, v]) => html`<dt>${k.replace(/_/g, ' ')}</dt><dd>${value(v)}</dd>`)}
                </dl>
                <h2>Context</h2>
                ${Object.keys(e.context).length
                  ? html`<dl class="facts">${Object.entries(e.context).map(([k, v]) => html`<dt>${k.replace(/_/g, ' ')}</dt><dd><code>${value(v)}</code></dd>`)}</dl>`
                  : html`<p class="muted">No context recorded.</p>`}
                <h2>Media</h2>
                ${e.media.length
                  ? html`<ul>${e.media.map((m) => mediaItem(m.label ?? m.type, linkHref(m.url)))}</ul>`
                  : html`<p class="muted">No media with this event.</p>`}
              `
            : ''}
        </section>
        <div class="map" id="event-map"></div>
      </div>
    `,
    el,
  );
  const map = await createMap(el.querySelector<HTMLElement>('#event-map')!, 'Where the event happened');
  if (e?.position) {
    L.circleMarker([e.position.lat, e.position.lng], { radius: 9, color: '#b3261e', fillOpacity: 0.9 }).bindTooltip(textElement(kindLabel(e.kind)), { permanent: true }).addTo(map);
    map.setView([e.position.lat, e.position.lng], autoZoom, { animate: false });
  }
  return () => map.remove();
};
