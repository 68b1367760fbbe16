/** Drivers: GET /v1/drivers with their score (last 7 days) and current vehicle. */
import { all, type Driver } from '../api';
import type { Mount } from '../router';
import { errorBox, html, render } from '../ui';

export const scoreClass = (s: number | null): string => (s === null ? 'score-none' : s >= 80 ? 'score-good' : s >= 60 ? 'score-fair' : 'score-poor');

export const mount: Mount = async (el) => {
  let drivers: Driver[] = [];
  let error: unknown = null;
  let search = '';
  let loading = true;

  const draw = () => {
    const q = search.trim().toLowerCase();
    const shown = drivers.filter((d) => !q || d.name.toLowerCase().includes(q) || (d.external_id ?? '').toLowerCase().includes(q));
    render(
      html`
        <section class="page" aria-labelledby="drivers-title">
          <h1 id="drivers-title">Drivers</h1>
          <form class="filters" role="search" @submit=${(e: Event) => e.preventDefault()}>
            <div class="field"><label for="driver-search">Search</label><input id="driver-search" type="search" .value=${search} @input=${(e: Event) => ((search = (e.target as HTMLInputElement).value), draw())} /></div>
          </form>
          ${errorBox(error)}
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Drivers with their score and vehicle</caption>
              <thead><tr><th scope="col">Driver</th><th scope="col">External id</th><th scope="col">Score</th><th scope="col">Vehicle</th></tr></thead>
              <tbody>
                ${shown.map(
                  (d) => html`<tr>
                    <td><a href=${`/drivers/${d.id}`}>${d.name}</a></td>
                    <td>${d.external_id ?? '—'}</td>
                    <td><span class=${`score ${scoreClass(d.score)}`}>${d.score === null ? 'not scored' : Math.round(d.score)}</span></td>
                    <td>${d.current_vehicle ? html`<a href=${`/devices/${d.current_vehicle.device_id}`}>${d.current_vehicle.device_name ?? d.current_vehicle.device_id}</a>` : '—'}</td>
                  </tr>`,
                )}
              </tbody>
            </table>
          </div>
          <p class="muted" role="status">${loading ? 'Loading…' : `${shown.length} of ${drivers.length} drivers`}</p>
        </section>
      `,
      el,
    );
  };
  draw();
  try {
    drivers = await all<Driver>('/v1/drivers');
  } catch (err) {
    error = err;
  }
  loading = false;
  draw();
};
