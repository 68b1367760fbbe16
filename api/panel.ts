/**
 * Serves the customer panel's build (the UI's Vite output, dist/panel/):
 * `/` and the panel's client-side routes get index.html, `/assets/*` the
 * hashed bundles with a year's cache, and `/panel-config.json` the map
 * settings. The panel talks to the public /v1 API only; these routes serve
 * files and nothing else.
 *
 * Every panel answer carries a Content-Security-Policy that allows scripts,
 * styles, fonts and requests from this origin only (inline styles: Leaflet
 * sets them), images from here, data: URLs and the configured tile host, and
 * no framing.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ApiSettings } from './context.js';
import { sendProblem } from './plugins/errors.js';
import { ApiError } from './problem.js';
import { Nullable } from './schemas/common.js';

/** Paths the panel's client-side routes never use: a miss there is the API's 404, not the panel. */
const NOT_PANEL = /^\/(v1(\/|$)|docs(\/|$)|healthz$|readyz$|metrics$|openapi\.json$|assets\/)/;

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

/** Hashed file names change with their content: they may be kept for a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** index.html and unhashed files: revalidated, so a new build is picked up at once. */
const REVALIDATE = 'no-cache';

/** The CSP source of a tile URL template: its origin, a `{s}` subdomain placeholder as `*`. */
export function tileSource(tileUrl: string): string | null {
  const origin = /^(https?:\/\/[^/?#]+)/i.exec(tileUrl)?.[1];
  return origin ? origin.replace(/\{[a-z0-9]+\}/gi, '*') : null;
}

export function panelSecurityHeaders(tileUrl: string | null): Record<string, string> {
  const tiles = tileUrl ? tileSource(tileUrl) : null;
  const csp = [
    "default-src 'self'",
    `img-src 'self' data:${tiles ? ` ${tiles}` : ''}`,
    "style-src 'self' 'unsafe-inline'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { 'Content-Security-Policy': csp, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'same-origin', 'X-Frame-Options': 'DENY' };
}

/** A file of `dir` named by an untrusted relative path, or null when there is none (or the path leaves `dir`). */
async function fileIn(dir: string, relative: string): Promise<{ body: Buffer; type: string } | null> {
  const root = resolve(dir);
  const path = resolve(join(root, relative));
  if (relative.includes('\0') || !path.startsWith(root + sep)) return null;
  try {
    if (!(await stat(path)).isFile()) return null;
    return { body: await readFile(path), type: TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream' };
  } catch {
    return null;
  }
}

export interface Panel {
  /**
   * For the not-found handler: answers a GET for a panel page (index.html) or
   * a top-level file of the build, and returns true; false leaves the request
   * to the API's 404.
   */
  fallback(request: FastifyRequest, reply: FastifyReply): Promise<boolean>;
}

export async function panelRoutes(app: FastifyInstance, settings: ApiSettings): Promise<Panel> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const headers = panelSecurityHeaders(settings.panelTileUrl);
  const dir = settings.panelDir;

  const sendIndex = async (request: FastifyRequest, reply: FastifyReply) => {
    const index = await fileIn(dir, 'index.html');
    if (!index) {
      throw new ApiError(503, 'panel_not_built', `The customer panel is not built (no ${join(dir, 'index.html')}): run \`npm run build\`, then reload.`);
    }
    return reply.headers({ ...headers, 'Cache-Control': REVALIDATE }).type(index.type).send(index.body);
  };

  r.get('/', { schema: { hide: true } }, sendIndex);

  r.get('/assets/*', { schema: { hide: true } }, async (request, reply) => {
    const file = await fileIn(join(dir, 'assets'), (request.params as { '*': string })['*']);
    if (!file) throw new ApiError(404, 'route_not_found', `No panel asset ${request.url.split('?')[0]}`);
    return reply.headers({ ...headers, 'Cache-Control': IMMUTABLE }).type(file.type).send(file.body);
  });

  r.get(
    '/panel-config.json',
    {
      schema: {
        tags: ['Operations'],
        summary: "The customer panel's map settings",
        operationId: 'getPanelConfig',
        response: {
          200: Type.Object({
            tile_url: Nullable(Type.String({ description: 'Leaflet tile URL template; null: only the bundled offline outline' })),
            tile_attribution: Nullable(Type.String({ description: 'Attribution the tiles require' })),
          }),
        },
      },
    },
    async (_request, reply) =>
      reply.headers({ 'Cache-Control': REVALIDATE }).send({ tile_url: settings.panelTileUrl, tile_attribution: settings.panelTileAttribution }),
  );

  return {
    async fallback(request, reply) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false;
      const path = request.url.split('?')[0]!;
      if (NOT_PANEL.test(path)) return false;
      // A file the build put at its top level (favicon, robots.txt): not index.html, never a directory.
      if (/^\/[\w.-]+$/.test(path) && path !== '/index.html') {
        const file = await fileIn(dir, path.slice(1));
        if (file) {
          await reply.headers({ ...headers, 'Cache-Control': REVALIDATE }).type(file.type).send(file.body);
          return true;
        }
      }
      if (!(request.headers.accept ?? '').includes('text/html')) return false;
      try {
        await sendIndex(request, reply);
      } catch (err) {
        sendProblem(request, reply, err as ApiError);
      }
      return true;
    },
  };
}
