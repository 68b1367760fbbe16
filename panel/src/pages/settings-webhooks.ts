/**
 * Settings → Webhooks: create an endpoint (URL, event kinds; the signing
 * secret shown once), and for the chosen one: enable/disable, rotate the
 * secret, send a test and see the receiver's answer (status, latency, start
 * of the body), the delivery log with redeliver, delete.
 */
import { all, del, get, patch, post, WEBHOOK_KINDS, type Delivery, type Page, type TestResult, type Webhook } from '../api';
import { setQuery, type Mount } from '../router';
import { confirmDialog, errorBox, fmtTime, html, render, secretDialog } from '../ui';

const PATTERNS = ['*', 'position.*', 'device.*', 'geofence.*', 'event.*', 'alarm.*', 'command.*'];

export const mount: Mount = async (el, _params, query) => {
  let hooks: Webhook[] = [];
  let selected: string | null = query.get('id');
  let deliveries: Delivery[] = [];
  let deliveriesCursor: string | null = null;
  let testResult: TestResult | null = null;
  let testing = false;
  let createError: unknown = null;
  let detailError: unknown = null;
  let status = '';

  const current = () => hooks.find((h) => h.id === selected) ?? null;

  const reload = async () => {
    hooks = await all<Webhook>('/v1/webhooks');
    if (selected && !current()) selected = null;
  };

  const loadDeliveries = async (more = false) => {
    const hook = current();
    if (!hook) return;
    try {
      const page = await get<Page<Delivery>>(`/v1/webhooks/${encodeURIComponent(hook.id)}/deliveries`, { limit: 20, cursor: more ? deliveriesCursor : null });
      deliveries = more ? [...deliveries, ...page.data] : page.data;
      deliveriesCursor = page.pagination.has_more ? page.pagination.next_cursor : null;
    } catch (err) {
      detailError = err;
    }
    draw();
  };

  const select = (id: string | null) => {
    selected = id;
    testResult = null;
    detailError = null;
    deliveries = [];
    setQuery(new URLSearchParams(id ? { id } : {}));
    draw();
    void loadDeliveries();
    if (id) el.querySelector<HTMLElement>('#webhook-detail-title')?.focus();
  };

  const create = async (e: SubmitEvent) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const data = new FormData(form);
    createError = null;
    try {
      const created = await post<Webhook & { secret: string }>('/v1/webhooks', {
        url: String(data.get('url') ?? '').trim(),
        events: data.getAll('events').map(String),
        description: String(data.get('description') ?? '').trim() || null,
      });
      form.reset();
      await reload();
      select(created.id);
      await secretDialog('Webhook created', 'Signing secret', created.secret, 'Copy the signing secret now: it is shown this once. Verify X-Service-Signature with it (see the README). Lost it? Rotate.');
      status = `Webhook to ${created.url} created.`;
    } catch (err) {
      createError = err;
    }
    draw();
  };

  const act = async (what: () => Promise<void>) => {
    detailError = null;
    try {
      await what();
    } catch (err) {
      detailError = err;
    }
    draw();
  };

  const rotate = (hook: Webhook) =>
    act(async () => {
      if (!(await confirmDialog('Rotate signing secret', 'A new secret signs deliveries from now on; the old one stays valid for 24 hours (sent as X-Service-Signature-Previous).', 'Rotate'))) return;
      const r = await post<{ secret: string; previous_secret_valid_until: string }>(`/v1/webhooks/${encodeURIComponent(hook.id)}/rotate-secret`, {});
      await reload();
      draw();
      await secretDialog('Secret rotated', 'New signing secret', r.secret, `Copy the new secret now: it is shown this once. The previous one is valid until ${fmtTime(r.previous_secret_valid_until)}.`);
      status = 'Secret rotated.';
    });

  const sendTest = (hook: Webhook, form: HTMLFormElement) =>
    act(async () => {
      testing = true;
      testResult = null;
      draw();
      try {
        const event = String(new FormData(form).get('event') ?? 'event.sos');
        testResult = await post<TestResult>(`/v1/webhooks/${encodeURIComponent(hook.id)}/test`, { event });
      } finally {
        testing = false;
      }
      await loadDeliveries();
    });

  const toggle = (hook: Webhook) =>
    act(async () => {
      await patch<Webhook>(`/v1/webhooks/${encodeURIComponent(hook.id)}`, { enabled: !hook.enabled || hook.status === 'disabled_by_platform' });
      await reload();
    });

  const remove = (hook: Webhook) =>
    act(async () => {
      if (!(await confirmDialog('Delete webhook', `Delete the webhook to ${hook.url}? Deliveries stop and its log is gone. This cannot be undone.`, 'Delete webhook'))) return;
      await del(`/v1/webhooks/${encodeURIComponent(hook.id)}`);
      await reload();
      select(null);
      status = 'Webhook deleted.';
    });

  const redeliver = (hook: Webhook, d: Delivery) =>
    act(async () => {
      await post(`/v1/webhooks/${encodeURIComponent(hook.id)}/deliveries/${encodeURIComponent(d.id)}/redeliver`);
      status = `Delivery ${d.id} queued again.`;
      await loadDeliveries();
    });

  const detail = (hook: Webhook) => html`
    <section class="card" aria-labelledby="webhook-detail-title">
      <h2 id="webhook-detail-title" tabindex="-1">${hook.description ?? hook.url}</h2>
      <dl class="facts">
        <dt>URL</dt><dd><code>${hook.url}</code></dd>
        <dt>Events</dt><dd>${hook.events.join(', ')}</dd>
        <dt>Status</dt><dd><span class=${`badge wh-${hook.status}`}>${hook.status.replace(/_/g, ' ')}</span>${hook.disabled_detail ? html` — ${hook.disabled_detail}` : ''}</dd>
        ${hook.previous_secret_valid_until ? html`<dt>Previous secret valid until</dt><dd>${fmtTime(hook.previous_secret_valid_until)}</dd>` : ''}
      </dl>
      <div class="actions start">
        <button type="button" @click=${() => toggle(hook)}>${hook.status === 'enabled' ? 'Disable' : 'Enable'}</button>
        <button type="button" @click=${() => rotate(hook)}>Rotate secret</button>
        <button type="button" class="danger" @click=${() => remove(hook)}>Delete</button>
      </div>
      ${errorBox(detailError)}
      <h3>Send a test</h3>
      <form class="filters" @submit=${(e: SubmitEvent) => (e.preventDefault(), void sendTest(hook, e.target as HTMLFormElement))}>
        <div class="field">
          <label for="test-event">Event kind</label>
          <select id="test-event" name="event">${WEBHOOK_KINDS.map((k) => html`<option value=${k} ?selected=${k === 'event.sos'}>${k}</option>`)}</select>
        </div>
        <button type="submit" class="primary" ?disabled=${testing}>${testing ? 'Sending…' : 'Send test'}</button>
      </form>
      <div class="test-result" role="status" aria-live="polite">
        ${testResult
          ? html`<dl class="facts">
              <dt>Result</dt><dd class=${testResult.delivered ? 'ok' : 'bad'}>${testResult.delivered ? 'Delivered' : 'Not delivered'}</dd>
              <dt>Status</dt><dd class="test-status">${testResult.status ?? '—'}</dd>
              <dt>Latency</dt><dd>${testResult.latency_ms} ms</dd>
              ${testResult.error ? html`<dt>Error</dt><dd>${testResult.error}</dd>` : ''}
              <dt>Body start</dt><dd><code class="test-body">${testResult.response_body_start || '(empty)'}</code></dd>
            </dl>`
          : ''}
      </div>
      <h3>Delivery log</h3>
      <button type="button" class="small" @click=${() => loadDeliveries()}>Refresh</button>
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Deliveries, newest first</caption>
          <thead><tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Last status</th><th scope="col">Latency</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${deliveries.map(
              (d) => html`<tr>
                <td>${fmtTime(d.created_at)}</td>
                <td>${d.event}</td>
                <td><span class=${`badge dl-${d.state}`}>${d.state}</span></td>
                <td>${d.attempts}</td>
                <td title=${d.last_error ?? ''}>${d.last_status ?? d.last_error ?? '—'}</td>
                <td>${d.last_latency_ms === null ? '—' : `${d.last_latency_ms} ms`}</td>
                <td><button type="button" class="small" @click=${() => redeliver(hook, d)}>Redeliver<span class="visually-hidden"> ${d.id}</span></button></td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${deliveries.length ? '' : html`<p class="muted">No deliveries yet.</p>`}
      ${deliveriesCursor ? html`<button type="button" @click=${() => loadDeliveries(true)}>Load more</button>` : ''}
    </section>
  `;

  const draw = () => {
    const hook = current();
    render(
      html`
        <section class="page" aria-labelledby="webhooks-title">
          <h1 id="webhooks-title">Webhooks</h1>
          <p class="muted" role="status">${status}</p>
          <div class="columns">
            <div>
              <section class="card" aria-labelledby="new-webhook-title">
                <h2 id="new-webhook-title">New webhook</h2>
                <form class="create" @submit=${create}>
                  <label for="wh-url">URL</label>
                  <input id="wh-url" name="url" type="url" required placeholder="https://hooks.example.com/fleet" autocomplete="off" />
                  <label for="wh-description">Description</label>
                  <input id="wh-description" name="description" maxlength="200" autocomplete="off" />
                  <fieldset>
                    <legend>Event kinds</legend>
                    <div class="scope-grid">
                      ${[...PATTERNS, ...WEBHOOK_KINDS].map(
                        (k) => html`<div class="choice"><input type="checkbox" id=${`wh-ev-${k}`} name="events" value=${k} /><label for=${`wh-ev-${k}`}><code>${k}</code></label></div>`,
                      )}
                    </div>
                  </fieldset>
                  ${errorBox(createError)}
                  <button type="submit" class="primary">Create webhook</button>
                </form>
              </section>
              <section class="card" aria-labelledby="webhook-list-title">
                <h2 id="webhook-list-title">Endpoints</h2>
                ${hooks.length
                  ? html`<ul class="webhook-list">
                      ${hooks.map(
                        (h) => html`<li>
                          <button type="button" class="link" aria-pressed=${h.id === selected ? 'true' : 'false'} @click=${() => select(h.id)}>${h.description ?? h.url}</button>
                          <span class=${`badge wh-${h.status}`}>${h.status.replace(/_/g, ' ')}</span>
                          <div class="muted small">${h.url}</div>
                        </li>`,
                      )}
                    </ul>`
                  : html`<p class="muted">No webhooks yet.</p>`}
              </section>
            </div>
            <div>${hook ? detail(hook) : html`<p class="muted card">Choose an endpoint to test it and see its deliveries.</p>`}</div>
          </div>
        </section>
      `,
      el,
    );
  };

  draw();
  try {
    await reload();
  } catch (err) {
    createError = err;
  }
  draw();
  await loadDeliveries();
};
