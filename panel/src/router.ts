/**
 * A tiny history router: paths like `/devices/:id` map to page modules; links
 * inside the app (same origin, no target, not marked `data-external`) are
 * followed with pushState, Back and Forward with popstate. The server answers
 * every page path with index.html (api/panel.ts), so a reload works anywhere.
 */

export type Params = Record<string, string>;
/** A mounted page; the function it returns (if any) runs when the page is left. */
export type Mount = (el: HTMLElement, params: Params, query: URLSearchParams) => void | (() => void) | Promise<void | (() => void)>;

interface Route {
  pattern: RegExp;
  keys: string[];
  load: () => Promise<{ mount: Mount }>;
  title: string;
}

const routes: Route[] = [];

export function route(path: string, title: string, load: Route['load']): void {
  const keys: string[] = [];
  const pattern = new RegExp(
    '^' +
      path.replace(/\/:(\w+)/g, (_m, key: string) => {
        keys.push(key);
        return '/([^/]+)';
      }) +
      '/?$',
  );
  routes.push({ pattern, keys, load, title });
}

export function match(pathname: string): { route: Route; params: Params } | null {
  for (const r of routes) {
    const m = r.pattern.exec(pathname);
    if (m) return { route: r, params: Object.fromEntries(r.keys.map((k, i) => [k, decodeURIComponent(m[i + 1] ?? '')])) };
  }
  return null;
}

let listener: (() => void) | null = null;

export function navigate(to: string, replace = false): void {
  if (to === location.pathname + location.search) return;
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  listener?.();
}

/** Updates the query string of the current page without a new history entry or a re-mount. */
export function setQuery(query: URLSearchParams): void {
  const s = query.toString();
  history.replaceState(null, '', location.pathname + (s ? `?${s}` : ''));
}

export function startRouter(onChange: () => void): void {
  listener = onChange;
  window.addEventListener('popstate', onChange);
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.('a');
    if (!a || a.target || a.hasAttribute('download') || a.dataset.external !== undefined) return;
    // In-page anchors (the skip link) keep the browser's own behaviour.
    if ((a.getAttribute('href') ?? '').startsWith('#')) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || url.pathname.startsWith('/v1/') || url.pathname.startsWith('/docs')) return;
    e.preventDefault();
    navigate(url.pathname + url.search);
  });
}
