/**
 * A driver: daily scores (GET /v1/drivers/{id}/score) as a chart (uPlot: the
 * score line, and the penalty points of each event type as bars), and the
 * same numbers in a table (readable without the chart).
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { get, type DailyScore, type Driver } from '../api';
import type { Mount } from '../router';
import { errorBox, html, kindLabel, nextDay, render, today } from '../ui';
import { scoreClass } from './drivers';

const COLORS = ['#b3261e', '#c25e00', '#7a5af8', '#0b7285', '#5c7cfa', '#2b8a3e', '#862e9c', '#495057'];

function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

export const mount: Mount = async (el, params) => {
  const id = params.id!;
  let driver: Driver | null = null;
  let days: DailyScore[] = [];
  let span = 14;
  let error: unknown = null;
  let chart: uPlot | null = null;

  const kinds = () => [...new Set(days.flatMap((d) => Object.keys(d.breakdown)))];

  const draw = () =>
    render(
      html`
        <section class="page" aria-labelledby="driver-title">
          <p><a href="/drivers">← Drivers</a></p>
          <h1 id="driver-title">${driver?.name ?? 'Driver'}</h1>
          ${driver
            ? html`<p>Score (last 7 days): <span class=${`score ${scoreClass(driver.score)}`}>${driver.score === null ? 'not scored' : Math.round(driver.score)}</span>
                · Vehicle: ${driver.current_vehicle ? html`<a href=${`/devices/${driver.current_vehicle.device_id}`}>${driver.current_vehicle.device_name ?? driver.current_vehicle.device_id}</a>` : '—'}</p>`
            : ''}
          <form class="filters" @submit=${(e: Event) => e.preventDefault()}>
            <div class="field">
              <label for="score-span">Period</label>
              <select id="score-span" @change=${(e: Event) => ((span = Number((e.target as HTMLSelectElement).value)), void load())}>
                ${[7, 14, 30, 90].map((n) => html`<option value=${n} ?selected=${span === n}>Last ${n} days</option>`)}
              </select>
            </div>
          </form>
          ${errorBox(error)}
          <figure class="chart card">
            <div id="score-chart" role="img" aria-label="Daily score and penalty points by event type; the table below has the same numbers"></div>
            <figcaption class="muted small">Line: daily score (0–100, left axis). Stacked bars: penalty points by event type (right axis).</figcaption>
          </figure>
          <div class="table-wrap">
            <table>
              <caption>Daily scores and events by type</caption>
              <thead><tr><th scope="col">Day</th><th scope="col">Score</th><th scope="col">km</th>${kinds().map((k) => html`<th scope="col">${kindLabel(k)}</th>`)}</tr></thead>
              <tbody>
                ${days.map(
                  (d) => html`<tr>
                    <th scope="row">${d.date}</th>
                    <td>${d.score === null ? '—' : Math.round(d.score)}</td>
                    <td>${d.distance_km.toFixed(1)}</td>
                    ${kinds().map((k) => {
                      const b = d.breakdown[k];
                      return html`<td>${b && b.count ? `${b.count}${b.points !== null ? ` (−${b.points.toFixed(1)})` : ''}` : '0'}</td>`;
                    })}
                  </tr>`,
                )}
              </tbody>
            </table>
          </div>
        </section>
      `,
      el,
    );

  const plot = () => {
    chart?.destroy();
    const target = el.querySelector<HTMLElement>('#score-chart');
    if (!target || !days.length) return;
    // Penalty points by event type, stacked: each bar series is the running total up to its kind, drawn
    // from the tallest down so each kind shows as its own band; the legend shows the kind's own value.
    const ks = kinds().filter((k) => days.some((d) => (d.breakdown[k]?.points ?? 0) > 0));
    const own = ks.map((k) => days.map((d) => d.breakdown[k]?.points ?? 0));
    const stacked = own.map((_row, i) => days.map((_d, j) => own.slice(0, i + 1).reduce((sum, r) => sum + r[j]!, 0)));
    const order = ks.map((_k, i) => i).reverse();
    const xs = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const width = Math.max(280, Math.min(900, target.clientWidth || 600));
    const bars = uPlot.paths.bars!({ size: [0.6, 40] });
    chart = new uPlot(
      {
        width,
        height: 260,
        scales: { x: { time: true }, score: { range: [0, 100] }, points: { range: (_u, _min, max) => [0, Math.max(5, max)] } },
        axes: [{}, { scale: 'score', label: 'score' }, { scale: 'points', side: 1, label: 'penalty points', grid: { show: false } }],
        series: [
          {},
          ...order.map((i) => ({
            label: kindLabel(ks[i]!),
            scale: 'points',
            stroke: COLORS[i % COLORS.length]!,
            fill: COLORS[i % COLORS.length]!,
            paths: bars,
            points: { show: false },
            value: (_u: uPlot, _v: number | null, _si: number, idx: number | null) => (idx === null ? '--' : own[i]![idx]!.toFixed(1)),
          })),
          { label: 'score', scale: 'score', stroke: '#16324f', width: 3, spanGaps: false },
        ],
      },
      [xs, ...order.map((i) => stacked[i]!), days.map((d) => d.score)] as uPlot.AlignedData,
      target,
    );
  };

  const load = async () => {
    error = null;
    try {
      const to = nextDay(today());
      days = (await get<{ data: DailyScore[] }>(`/v1/drivers/${encodeURIComponent(id)}/score`, { from: addDays(to, -span), to })).data;
    } catch (err) {
      error = err;
    }
    draw();
    plot();
  };

  try {
    driver = await get<Driver>(`/v1/drivers/${encodeURIComponent(id)}`);
  } catch (err) {
    error = err;
  }
  await load();
  // The chart is drawn at its box's width: drawn again when the window changes size (a phone turned).
  let resizing = 0;
  const onResize = () => {
    cancelAnimationFrame(resizing);
    resizing = requestAnimationFrame(plot);
  };
  window.addEventListener('resize', onResize);
  return () => {
    window.removeEventListener('resize', onResize);
    chart?.destroy();
  };
};
