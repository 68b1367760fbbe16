/** Events: GET /v1/events with filters (kind, severity, device, day range), newest first, a page at a time; live ones are added on top. */
import { all, get, EVENT_KINDS, SEVERITIES, type Device, type FleetEvent, type Page } from '../api';
import { subscribe } from '../live';
import { setQuery, type Mount } from '../router';
import { errorBox, fmtTime, html, kindLabel, nextDay, render } from '../ui';
import { deviceLabel } from './fleet';

const FILTERS = ['kind', 'severity', 'device_id', 'from', 'to'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

export const mount: Mount = async (el, _params, query) => {
  const filters: Filters = { kind: '', severity: '', device_id: '', from: '', to: '' };
  for (const f of FILTERS) filters[f] = query.get(f) ?? '';
  let devices: Device[] = [];
  let items: FleetEvent[] = [];
  let cursor: string | null = null;
  let error: unknown = null;
  let loading = false;

  const apiQuery = () => ({
    kind: filters.kind,
    severity: filters.severity,
    device_id: filters.device_id,
    from: filters.from ? `${filters.from}T00:00:00Z` : '',
    to: filters.to ? `${nextDay(filters.to)}T00:00:00Z` : '',
  });

  const load = async (more = false) => {
    loading = true;
    error = null;
    draw();
    try {
      const page = await get<Page<FleetEvent>>('/v1/events', { ...apiQuery(), limit: 50, cursor: more ? cursor : null });
      items = more ? [...items, ...page.data] : page.data;
      cursor = page.pagination.has_more ? page.pagination.next_cursor : null;
    } catch (err) {
      error = err;
    }
    loading = false;
    draw();
  };

  const change = (name: keyof Filters) => (e: Event) => {
    filters[name] = (e.target as HTMLInputElement | HTMLSelectElement).value;
    const p = new URLSearchParams();
    for (const f of FILTERS) if (filters[f]) p.set(f, filters[f]);
    setQuery(p);
    void load();
  };

  const draw = () =>
    render(
      html`
        <section class="page" aria-labelledby="events-title">
          <h1 id="events-title">Events</h1>
          <form class="filters" @submit=${(e: Event) => e.preventDefault()}>
            <div class="field">
              <label for="f-kind">Kind</label>
              <select id="f-kind" @change=${change('kind')}>
                <option value="" ?selected=${!filters.kind}>Any</option>
                ${['geofence.*', 'event.*', 'alarm.*', ...EVENT_KINDS].map((k) => html`<option value=${k} ?selected=${filters.kind === k}>${k}</option>`)}
              </select>
            </div>
            <div class="field">
              <label for="f-severity">Severity</label>
              <select id="f-severity" @change=${change('severity')}>
                <option value="" ?selected=${!filters.severity}>Any</option>
                ${SEVERITIES.map((s) => html`<option value=${s} ?selected=${filters.severity === s}>${s}</option>`)}
              </select>
            </div>
            <div class="field">
              <label for="f-device">Device</label>
              <select id="f-device" @change=${change('device_id')}>
                <option value="" ?selected=${!filters.device_id}>Any</option>
                ${devices.map((d) => html`<option value=${d.id} ?selected=${filters.device_id === d.id}>${deviceLabel(d)}</option>`)}
              </select>
            </div>
            <div class="field"><label for="f-from">From (UTC day)</label><input id="f-from" type="date" .value=${filters.from} @change=${change('from')} /></div>
            <div class="field"><label for="f-to">To (UTC day)</label><input id="f-to" type="date" .value=${filters.to} @change=${change('to')} /></div>
          </form>
          ${errorBox(error)}
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Events, newest first</caption>
              <thead><tr><th scope="col">When</th><th scope="col">Kind</th><th scope="col">Severity</th><th scope="col">Device</th><th scope="col">Source</th></tr></thead>
              <tbody>
                ${items.map(
                  (e) => html`<tr>
                    <td>${fmtTime(e.occurred_at)}</td>
                    <td><a href=${`/events/${e.id}`}>${kindLabel(e.kind)}</a></td>
                    <td><span class=${`badge sev-${e.severity}`}>${e.severity}</span></td>
                    <td>${e.device_name ?? e.device_id}</td>
                    <td>${e.source}</td>
                  </tr>`,
                )}
              </tbody>
            </table>
          </div>
          <p class="muted" role="status">${loading ? 'Loading…' : items.length ? `${items.length} events shown` : 'No events match.'}</p>
          ${cursor ? html`<button type="button" @click=${() => load(true)} ?disabled=${loading}>Load more</button>` : ''}
        </section>
      `,
      el,
    );

  draw();
  try {
    devices = await all<Device>('/v1/devices');
  } catch (err) {
    error = err;
  }
  await load();
  const unsubscribe = subscribe({
    event: (e) => {
      const unfiltered = FILTERS.every((f) => !filters[f]);
      if (unfiltered && !items.some((x) => x.id === e.id)) {
        items = [e, ...items];
        draw();
      }
    },
  });
  return unsubscribe;
};
