/**
 * The customer panel's files over a real HTTP server, from a fake build in a
 * temporary directory (these tests do not need the UI): index.html for `/`
 * and client-side routes, hashed assets with a long cache, security headers,
 * the map settings, and 503 while the panel is not built.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { panelSecurityHeaders } from '../../api/panel.js';
import { startApiHarness, type ApiHarness, type HarnessOptions } from '../support/api-harness.js';

const INDEX = '<!doctype html><title>Fleet panel</title><script type="module" src="/assets/index-abc123.js"></script>';
const tmp = mkdtempSync(join(tmpdir(), 'fleet-panel-'));
const panelDir = join(tmp, 'panel');
mkdirSync(join(panelDir, 'assets'), { recursive: true });
writeFileSync(join(panelDir, 'index.html'), INDEX);
writeFileSync(join(panelDir, 'assets', 'index-abc123.js'), 'console.log("panel")');
writeFileSync(join(panelDir, 'assets', 'index-abc123.css'), 'body{margin:0}');
writeFileSync(join(panelDir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
writeFileSync(join(tmp, 'secret.txt'), 'not for the web');

const TILES = 'https://{s}.tile.example.org/{z}/{x}/{y}.png';
const servers: ApiHarness[] = [];
let base = '';
let unbuilt = '';

async function serve(settings: HarnessOptions['settings']): Promise<string> {
  const h = await startApiHarness({ settings });
  servers.push(h);
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  base = await serve({ panelDir, panelTileUrl: TILES, panelTileAttribution: '© Example tiles' });
  unbuilt = await serve({ panelDir: join(tmp, 'not-built') });
});
afterAll(async () => {
  for (const h of servers) await h.close();
  rmSync(tmp, { recursive: true, force: true });
});

const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

describe('the customer panel', () => {
  it('serves index.html at / with the CSP (tile host included) and security headers, revalidated on every load', async () => {
    const res = await fetch(`${base}/`, { headers: html });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toBe(INDEX);
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'self'; img-src 'self' data: https://*.tile.example.org; style-src 'self' 'unsafe-inline'; connect-src 'self'; " +
        "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('same-origin');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    // Without a tile URL the map may load images from this origin and data: URLs only.
    expect(panelSecurityHeaders(null)['Content-Security-Policy']).toContain("img-src 'self' data:; ");
  });

  it('answers client-side routes with index.html when the browser asks for a page, and leaves API paths to the API', async () => {
    for (const path of ['/fleet', '/devices/dev_01jbz3k8x6m2q9w4e7r5t1y0ha', '/settings/api?tab=keys']) {
      const res = await fetch(`${base}${path}`, { headers: html });
      expect([path, res.status, await res.text()]).toEqual([path, 200, INDEX]);
    }
    const json = await fetch(`${base}/fleet`, { headers: { accept: 'application/json' } });
    expect([json.status, ((await json.json()) as { code: string }).code]).toEqual([404, 'route_not_found']);
    for (const path of ['/v1/nothing-here', '/v1', '/docs/nothing', '/openapi.json', '/assets/missing-123.js']) {
      const res = await fetch(`${base}${path}`, { headers: html });
      expect([path, res.status, res.headers.get('content-type')]).toEqual([path, 404, 'application/problem+json; charset=utf-8']);
    }
    const post = await fetch(`${base}/fleet`, { method: 'POST', headers: html });
    expect(post.status).toBe(404);
    expect((await fetch(`${base}/healthz`, { headers: html })).headers.get('content-type')).toContain('application/json');
  });

  it('serves hashed assets for a year and top-level files of the build, and nothing outside it', async () => {
    const js = await fetch(`${base}/assets/index-abc123.js`);
    expect([js.status, js.headers.get('content-type'), js.headers.get('cache-control')]).toEqual([
      200,
      'text/javascript; charset=utf-8',
      'public, max-age=31536000, immutable',
    ]);
    expect(await js.text()).toBe('console.log("panel")');
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await fetch(`${base}/assets/index-abc123.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    const icon = await fetch(`${base}/favicon.svg`, { headers: { accept: 'image/*' } });
    expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
    for (const path of ['/assets/..%2f..%2fsecret.txt', '/assets/%2e%2e/%2e%2e/secret.txt', '/assets/', '/secret.txt']) {
      const res = await fetch(`${base}${path}`);
      expect([path, res.status]).toEqual([path, 404]);
      expect(await res.text()).not.toContain('not for the web');
    }
  });

  it('GET /panel-config.json gives the tile URL and attribution, null when not configured', async () => {
    expect(await (await fetch(`${base}/panel-config.json`)).json()).toEqual({ tile_url: TILES, tile_attribution: '© Example tiles' });
    expect(await (await fetch(`${unbuilt}/panel-config.json`)).json()).toEqual({ tile_url: null, tile_attribution: null });
  });

  it('answers 503 panel_not_built, telling to run npm run build, while dist/panel is missing', async () => {
    for (const path of ['/', '/fleet']) {
      const res = await fetch(`${unbuilt}${path}`, { headers: html });
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      const problem = (await res.json()) as { code: string; detail: string };
      expect(problem.code).toBe('panel_not_built');
      expect(problem.detail).toContain('npm run build');
    }
    expect((await fetch(`${unbuilt}/v1/devices`)).status).toBe(401);
  });
});
