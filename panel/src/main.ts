/**
 * The panel's entry: checks the session (GET /v1/sessions/current), then
 * shows the login page or the app shell (navigation, the page of the URL).
 */
import './styles.css';
import { ApiProblem, request, whenUnauthorized, type Session } from './api';
import { onLiveState } from './live';
import { getSession, setSession } from './session';
import { match, navigate, route, startRouter } from './router';
import { closeAllDialogs, html, render } from './ui';

route('/', 'Fleet', () => import('./pages/fleet'));
route('/fleet', 'Fleet', () => import('./pages/fleet'));
route('/devices/:id', 'Device', () => import('./pages/device'));
route('/events', 'Events', () => import('./pages/events'));
route('/events/:id', 'Event', () => import('./pages/event'));
route('/geofences', 'Geofences', () => import('./pages/geofences'));
route('/drivers', 'Drivers', () => import('./pages/drivers'));
route('/drivers/:id', 'Driver', () => import('./pages/driver'));
route('/settings/api', 'API access', () => import('./pages/settings-api'));
route('/settings/webhooks', 'Webhooks', () => import('./pages/settings-webhooks'));
route('/login', 'Log in', () => import('./pages/login'));

const app = document.getElementById('app')!;
// lit-html renders after what a container holds: drop the static "Loading…" first.
app.replaceChildren();
let leave: (() => void) | null = null;
let generation = 0;

const NAV = [
  { href: '/fleet', label: 'Fleet', match: /^\/($|fleet|devices)/ },
  { href: '/events', label: 'Events', match: /^\/events/ },
  { href: '/geofences', label: 'Geofences', match: /^\/geofences/ },
  { href: '/drivers', label: 'Drivers', match: /^\/drivers/ },
  { href: '/settings/api', label: 'API access', match: /^\/settings\/api/ },
  { href: '/settings/webhooks', label: 'Webhooks', match: /^\/settings\/webhooks/ },
];

async function logout(): Promise<void> {
  try {
    await request('DELETE', '/v1/sessions/current', undefined, { quiet401: true });
  } catch {
    // Already ended: the login page is where we go either way.
  }
  setSession(null);
  navigate('/login');
}

function shell(title: string): HTMLElement {
  const session = getSession();
  const path = location.pathname;
  render(
    html`
      <header class="topbar">
        <a class="brand" href="/fleet">Fleet</a>
        <nav aria-label="Main">
          <ul>
            ${NAV.map((n) => html`<li><a href=${n.href} aria-current=${n.match.test(path) ? 'page' : 'false'}>${n.label}</a></li>`)}
          </ul>
        </nav>
        <div class="who">
          <span class="live-state" role="status" aria-live="polite"></span>
          <span class="user" title=${session?.user.email ?? ''}>${session?.customer.name ?? ''}</span>
          <button type="button" class="link" @click=${logout}>Log out</button>
        </div>
      </header>
      <main id="main" tabindex="-1" aria-label=${title}></main>
    `,
    app,
  );
  showLiveState(); // a shell drawn anew (after the login page) starts with the stream's current state
  return app.querySelector('main')!;
}

let first = true;

async function show(): Promise<void> {
  const mine = ++generation;
  closeAllDialogs();
  leave?.();
  leave = null;
  const session = getSession();
  const found = match(location.pathname);
  if (!found) {
    navigate('/fleet', true);
    return;
  }
  if (!session && found.route.title !== 'Log in') {
    const next = location.pathname + location.search;
    navigate(`/login${next !== '/' ? `?next=${encodeURIComponent(next)}` : ''}`, true);
    return;
  }
  if (session && found.route.title === 'Log in') {
    navigate('/fleet', true);
    return;
  }
  const el = found.route.title === 'Log in' ? (render(html`<main id="main" class="login-main"></main>`, app), app.querySelector('main')!) : shell(found.route.title);
  document.title = `${found.route.title} · Fleet panel`;
  try {
    const page = await found.route.load();
    if (mine !== generation) return;
    const cleanup = await page.mount(el, found.params, new URLSearchParams(location.search));
    if (mine !== generation) {
      if (cleanup) cleanup();
      return;
    }
    leave = cleanup ?? null;
    // After a navigation inside the app, keyboard and screen-reader users start at the new page's content.
    if (!first && found.route.title !== 'Log in' && !el.contains(document.activeElement)) el.focus({ preventScroll: true });
  } catch (err) {
    if (mine === generation) render(html`<p class="error" role="alert">This page could not be shown: ${err instanceof Error ? err.message : String(err)}</p>`, el);
  }
}

let liveText = '';
const showLiveState = () => {
  const el = document.querySelector('.live-state');
  if (el && el.textContent !== liveText) el.textContent = liveText;
};
onLiveState((s) => {
  liveText = s === 'open' ? '● Live' : s === 'connecting' ? '○ Connecting…' : '';
  showLiveState();
});

whenUnauthorized(() => {
  if (!getSession()) return;
  setSession(null);
  navigate(`/login?next=${encodeURIComponent(location.pathname + location.search)}`, true);
});

async function boot(): Promise<void> {
  try {
    setSession(await request<Session>('GET', '/v1/sessions/current', undefined, { quiet401: true }));
  } catch (err) {
    if (!(err instanceof ApiProblem && err.status === 401)) console.warn('session check failed', err);
    setSession(null);
  }
  startRouter(() => {
    first = false;
    void show();
  });
  await show();
  first = false;
}

void boot();
