/**
 * Settings → API access: API keys (GET/POST /v1/api-keys, DELETE to revoke)
 * and OAuth clients (GET/POST /v1/oauth/clients, DELETE). A new secret is
 * shown once in a dialog with a copy button; nothing here keeps it after.
 */
import { all, del, post, READ_SCOPES, SCOPES, type ApiKey, type OAuthClient } from '../api';
import type { Mount } from '../router';
import { confirmDialog, errorBox, fmtAgo, fmtTime, html, render, secretDialog, type TemplateResult } from '../ui';

type Access = 'read' | 'full' | 'custom';

/** The scope picker of a create form: read-only, full, or a chosen set. */
function scopePicker(prefix: string, access: Access, onAccess: (a: Access) => void): TemplateResult {
  return html`
    <fieldset>
      <legend>Access</legend>
      ${(
        [
          ['read', 'Read-only (every :read scope)'],
          ['full', 'Full access (every scope)'],
          ['custom', 'Choose scopes'],
        ] as const
      ).map(
        ([value, label]) => html`<div class="choice">
          <input type="radio" id=${`${prefix}-access-${value}`} name="access" value=${value} .checked=${access === value} @change=${() => onAccess(value)} />
          <label for=${`${prefix}-access-${value}`}>${label}</label>
        </div>`,
      )}
      ${access === 'custom'
        ? html`<div class="scope-grid" role="group" aria-label="Scopes">
            ${SCOPES.map(
              (s) => html`<div class="choice"><input type="checkbox" id=${`${prefix}-scope-${s}`} name="scope" value=${s} /><label for=${`${prefix}-scope-${s}`}><code>${s}</code></label></div>`,
            )}
          </div>`
        : ''}
    </fieldset>
  `;
}

function scopesOf(form: HTMLFormElement, access: Access): string[] {
  if (access === 'read') return [...READ_SCOPES];
  if (access === 'full') return [...SCOPES];
  return new FormData(form).getAll('scope').map(String);
}

/** Empties the form's name; the access choice is lit's to show (a form reset would uncheck the bound radio). */
function clearName(form: HTMLFormElement): void {
  (form.elements.namedItem('name') as HTMLInputElement).value = '';
  for (const box of form.querySelectorAll<HTMLInputElement>('input[name="scope"]')) box.checked = false;
}

const scopeSummary = (scopes: string[]): string =>
  scopes.length === SCOPES.length ? 'full access' : scopes.length === READ_SCOPES.length && scopes.every((s) => s.endsWith(':read')) ? 'read-only' : scopes.join(', ');

export const mount: Mount = async (el) => {
  let keys: ApiKey[] = [];
  let clients: OAuthClient[] = [];
  let keyAccess: Access = 'read';
  let clientAccess: Access = 'read';
  let keyError: unknown = null;
  let clientError: unknown = null;
  let status = '';

  const reload = async () => {
    [keys, clients] = await Promise.all([all<ApiKey>('/v1/api-keys'), all<OAuthClient>('/v1/oauth/clients')]);
  };

  const createKey = async (e: SubmitEvent) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    keyError = null;
    try {
      const name = String(new FormData(form).get('name') ?? '').trim();
      const created = await post<ApiKey & { secret: string }>('/v1/api-keys', { name, scopes: scopesOf(form, keyAccess) });
      clearName(form);
      keyAccess = 'read';
      await reload();
      draw();
      await secretDialog('API key created', `Secret of “${created.name}”`, created.secret, 'Copy the key now: it is shown this once and cannot be read again. Send it as Authorization: Bearer <key>.');
      status = `Key “${created.name}” created.`;
    } catch (err) {
      keyError = err;
    }
    draw();
  };

  const createClient = async (e: SubmitEvent) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    clientError = null;
    try {
      const name = String(new FormData(form).get('name') ?? '').trim();
      const created = await post<OAuthClient & { client_secret: string }>('/v1/oauth/clients', { name, scopes: scopesOf(form, clientAccess) });
      clearName(form);
      clientAccess = 'read';
      await reload();
      draw();
      await secretDialog(
        'OAuth client created',
        `Client secret of ${created.client_id}`,
        created.client_secret,
        `Client id: ${created.client_id}. Copy the client secret now: it is shown this once. Exchange both at POST /v1/oauth/token (client_credentials).`,
      );
      status = `OAuth client “${created.name}” created.`;
    } catch (err) {
      clientError = err;
    }
    draw();
  };

  const revokeKey = async (k: ApiKey) => {
    if (!(await confirmDialog('Revoke API key', `Revoke “${k.name}”? Requests with it are refused from now on. This cannot be undone.`, 'Revoke key'))) return;
    try {
      await del(`/v1/api-keys/${encodeURIComponent(k.id)}`);
      status = `Key “${k.name}” revoked.`;
      await reload();
    } catch (err) {
      keyError = err;
    }
    draw();
  };

  const deleteClient = async (c: OAuthClient) => {
    if (!(await confirmDialog('Delete OAuth client', `Delete “${c.name}”? Its tokens stop working. This cannot be undone.`, 'Delete client'))) return;
    try {
      await del(`/v1/oauth/clients/${encodeURIComponent(c.client_id)}`);
      status = `OAuth client “${c.name}” deleted.`;
      await reload();
    } catch (err) {
      clientError = err;
    }
    draw();
  };

  const draw = () =>
    render(
      html`
        <section class="page" aria-labelledby="api-title">
          <h1 id="api-title">API access</h1>
          <p class="muted" role="status">${status}</p>
          <section class="card" aria-labelledby="keys-title">
            <h2 id="keys-title">API keys</h2>
            <form class="create" @submit=${createKey} aria-label="Create an API key">
              <label for="key-name">Name</label>
              <input id="key-name" name="name" required maxlength="100" autocomplete="off" placeholder="e.g. Dispatch integration" />
              ${scopePicker('key', keyAccess, (a) => ((keyAccess = a), draw()))}
              ${errorBox(keyError)}
              <button type="submit" class="primary">Create key</button>
            </form>
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">API keys</caption>
                <thead><tr><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
                <tbody>
                  ${keys.map(
                    (k) => html`<tr data-key-id=${k.id}>
                      <td>${k.name}</td>
                      <td class="small">${scopeSummary(k.scopes)}</td>
                      <td>${fmtTime(k.created_at)}</td>
                      <td title=${k.last_used_at ?? ''}>${fmtAgo(k.last_used_at)}</td>
                      <td>${k.revoked_at ? html`<span class="badge">revoked</span>` : html`<button type="button" class="danger small" @click=${() => revokeKey(k)}>Revoke<span class="visually-hidden"> ${k.name}</span></button>`}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>
          </section>
          <section class="card" aria-labelledby="clients-title">
            <h2 id="clients-title">OAuth clients</h2>
            <form class="create" @submit=${createClient} aria-label="Create an OAuth client">
              <label for="client-name">Name</label>
              <input id="client-name" name="name" required maxlength="100" autocomplete="off" />
              ${scopePicker('client', clientAccess, (a) => ((clientAccess = a), draw()))}
              ${errorBox(clientError)}
              <button type="submit" class="primary">Create client</button>
            </form>
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">OAuth clients</caption>
                <thead><tr><th scope="col">Name</th><th scope="col">Client id</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
                <tbody>
                  ${clients.map(
                    (c) => html`<tr>
                      <td>${c.name}</td>
                      <td><code>${c.client_id}</code></td>
                      <td class="small">${scopeSummary(c.scopes)}</td>
                      <td>${fmtTime(c.created_at)}</td>
                      <td><button type="button" class="danger small" @click=${() => deleteClient(c)}>Delete<span class="visually-hidden"> ${c.name}</span></button></td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>
          </section>
        </section>
      `,
      el,
    );

  draw();
  try {
    await reload();
  } catch (err) {
    keyError = err;
  }
  draw();
};
