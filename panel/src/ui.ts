/**
 * Shared UI pieces: error messages (the API's problem detail, in an alert
 * region), modal dialogs (confirm; a secret shown once, with a copy button,
 * removed from the DOM when closed or when the page changes), formatting.
 */
import { html, render, type TemplateResult } from 'lit-html';
import { ApiProblem } from './api';

export function messageOf(err: unknown): string {
  if (err instanceof ApiProblem) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** An alert region's content for an error (empty for none). */
export function errorBox(err: unknown): TemplateResult {
  return err ? html`<p class="error" role="alert">${messageOf(err)}</p>` : html``;
}

/** Dialogs open now: closed (and removed, with any secret in them) when the page changes. */
const openDialogs = new Set<HTMLDialogElement>();

function openDialog(content: (close: (value: string) => void) => TemplateResult, label: string): Promise<string> {
  return new Promise((resolve) => {
    const dialog = document.createElement('dialog');
    dialog.setAttribute('aria-label', label);
    document.body.append(dialog);
    openDialogs.add(dialog);
    let result = 'cancel';
    const close = (value: string) => {
      result = value;
      dialog.close();
    };
    dialog.addEventListener('close', () => {
      openDialogs.delete(dialog);
      // Nothing of the dialog (a secret) stays in the page once it is closed.
      render(html``, dialog);
      dialog.remove();
      resolve(result);
    });
    render(content(close), dialog);
    dialog.showModal();
    dialog.querySelector<HTMLElement>('[autofocus]')?.focus();
  });
}

export function closeAllDialogs(): void {
  for (const d of [...openDialogs]) d.close();
}

export async function confirmDialog(title: string, message: string, confirmLabel: string): Promise<boolean> {
  const answer = await openDialog(
    (close) => html`
      <h2>${title}</h2>
      <p>${message}</p>
      <div class="actions">
        <button type="button" @click=${() => close('cancel')} autofocus>Cancel</button>
        <button type="button" class="danger" @click=${() => close('confirm')}>${confirmLabel}</button>
      </div>
    `,
    title,
  );
  return answer === 'confirm';
}

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Shows a secret once: the user copies it, then closes the dialog, and the
 * secret leaves the page (the dialog is removed; the caller keeps no copy).
 */
export function secretDialog(title: string, label: string, secret: string, note: string): Promise<string> {
  return openDialog((close) => {
    const copy = async (e: Event) => {
      const button = e.currentTarget as HTMLButtonElement;
      const status = button.parentElement?.parentElement?.querySelector('.copy-status');
      const ok = await copyText(secret);
      if (!ok) (button.parentElement?.querySelector('input') as HTMLInputElement | null)?.select();
      if (status) status.textContent = ok ? 'Copied to the clipboard.' : 'Copy was refused by the browser: the text is selected, press Ctrl+C.';
    };
    return html`
      <h2>${title}</h2>
      <p>${note}</p>
      <label for="secret-value">${label}</label>
      <div class="secret-row">
        <input id="secret-value" class="secret" readonly .value=${secret} autocomplete="off" spellcheck="false" />
        <button type="button" @click=${copy}>Copy</button>
      </div>
      <p class="copy-status" role="status" aria-live="polite"></p>
      <div class="actions"><button type="button" class="primary" @click=${() => close('done')} autofocus>I have copied it, close</button></div>
    `;
  }, title);
}

export function fmtTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function fmtAgo(iso: string | null | undefined): string {
  if (!iso) return 'never';
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return `${Math.max(s, 0)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

export const kindLabel = (kind: string): string => kind.replace(/^(event|alarm)\./, '').replace(/[._]/g, ' ');

/** Today's UTC date, YYYY-MM-DD. */
export const today = (): string => new Date().toISOString().slice(0, 10);

export function nextDay(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

export { html, render };
export type { TemplateResult };
