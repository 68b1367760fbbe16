/**
 * The device page's commands: send one of the types the device's protocol
 * supports (GET /v1/devices/{id}/command-types, a field per param), and its
 * commands with their status, kept live by the stream's `command` messages
 * and read again after each action of this page (a cancel, a send).
 */
import { del, get, post, type Command, type CommandTypeInfo, type Page } from '../api';
import { subscribe } from '../live';
import { errorBox, fmtTime, html, render } from '../ui';

const ENDED = new Set(['succeeded', 'failed', 'expired', 'cancelled', 'rejected']);

/** A param's value as the form holds it, as the API takes it (integers as numbers; empty: not given). */
function paramsOf(type: CommandTypeInfo, values: Record<string, string>): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const p of type.params) {
    const v = values[p.name]?.trim() ?? '';
    if (v === '') continue;
    out[p.name] = p.kind === 'integer' ? Number(v) : v;
  }
  return out;
}

function statusLine(c: Command): string {
  if (c.status === 'queued') return c.waiting_for === 'vehicle_stopped' ? 'waiting for the vehicle to stop' : `until ${fmtTime(c.expires_at)}`;
  if (c.response?.text) return c.response.text;
  return c.error ?? '';
}

/** Renders the section into `el`; returns what stops it. */
export function mountCommands(el: HTMLElement, deviceId: string): () => void {
  const base = `/v1/devices/${encodeURIComponent(deviceId)}`;
  let types: CommandTypeInfo[] = [];
  let chosen = '';
  let values: Record<string, string> = {};
  let commands: Command[] = [];
  let error: unknown = null;
  let sending = false;

  const reload = async () => {
    try {
      commands = (await get<Page<Command>>(`${base}/commands`, { limit: 20 })).data;
    } catch (err) {
      error = err;
    }
    draw();
  };

  const send = async (e: Event) => {
    e.preventDefault();
    const type = types.find((t) => t.type === chosen);
    if (!type) return;
    sending = true;
    error = null;
    draw();
    try {
      await post<Command>(`${base}/commands`, { type: type.type, params: paramsOf(type, values) });
      values = {};
    } catch (err) {
      error = err;
    }
    sending = false;
    await reload();
  };

  const cancel = async (c: Command) => {
    error = null;
    try {
      await del(`/v1/commands/${encodeURIComponent(c.id)}`);
    } catch (err) {
      error = err;
    }
    await reload();
  };

  const field = (p: CommandTypeInfo['params'][number]) => {
    const id = `cmd-param-${p.name}`;
    const input =
      p.kind === 'enum'
        ? html`<select id=${id} .value=${values[p.name] ?? ''} @change=${(e: Event) => (values[p.name] = (e.target as HTMLSelectElement).value)}>
            <option value="">—</option>
            ${p.values!.map((v) => html`<option value=${v}>${v}</option>`)}
          </select>`
        : html`<input id=${id} type=${p.kind === 'integer' ? 'number' : 'text'} .value=${values[p.name] ?? ''} ?required=${p.required}
            min=${p.minimum ?? ''} max=${p.maximum ?? ''} maxlength=${p.max_length ?? ''}
            @input=${(e: Event) => (values[p.name] = (e.target as HTMLInputElement).value)} />`;
    return html`<div class="field"><label for=${id}>${p.name}</label>${input}<span class="muted small">${p.description}</span></div>`;
  };

  const draw = () => {
    const type = types.find((t) => t.type === chosen);
    render(
      html`
        <h2>Commands</h2>
        <form class="filters" aria-label="Send a command" @submit=${send}>
          <div class="field">
            <label for="cmd-type">Command</label>
            <select id="cmd-type" .value=${chosen} @change=${(e: Event) => {
              chosen = (e.target as HTMLSelectElement).value;
              values = {};
              draw();
            }}>
              ${types.map((t) => html`<option value=${t.type}>${t.type.replace(/_/g, ' ')}</option>`)}
            </select>
            ${type ? html`<span class="muted small">${type.description}${type.text ? ` Sends “${type.text}”.` : ''}</span>` : ''}
          </div>
          ${type ? type.params.map(field) : ''}
          <button type="submit" ?disabled=${sending || !type}>Send</button>
        </form>
        ${errorBox(error)}
        ${commands.length
          ? html`<ul class="event-list" aria-label="Commands">
              ${commands.map(
                (c) => html`<li data-command=${c.id}>
                  ${c.type.replace(/_/g, ' ')} <span class=${`badge cmd-${c.status}`}>${c.status}</span>
                  ${c.status === 'queued' ? html`<button type="button" class="link" @click=${() => void cancel(c)}>Cancel</button>` : ''}
                  <br /><span class="muted small">${fmtTime(c.created_at)}${ENDED.has(c.status) || c.status === 'queued' ? ' · ' : ''}${statusLine(c)}</span>
                </li>`,
              )}
            </ul>`
          : html`<p class="muted">No commands yet.</p>`}
      `,
      el,
    );
  };

  draw();
  void (async () => {
    try {
      types = (await get<{ protocol: string | null; data: CommandTypeInfo[] }>(`${base}/command-types`)).data;
      chosen = types[0]?.type ?? '';
    } catch (err) {
      error = err;
    }
    await reload();
  })();

  return subscribe({
    command: (m) => {
      if (m.device_id !== deviceId) return;
      const at = commands.findIndex((c) => c.id === m.command.id);
      if (at >= 0) commands[at] = m.command;
      else commands.unshift(m.command);
      draw();
    },
  });
}
