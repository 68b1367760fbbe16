/**
 * GET /docs/errors: the error catalogue as one HTML page, the target of every
 * problem `type` (`/docs/errors#<code>`). Public, like the API docs at /docs
 * (swagger-ui owns /docs, /docs/json, /docs/yaml and /docs/static/*; this
 * static path is its own). Rendered once, at start.
 */
import type { FastifyInstance } from 'fastify';
import { ERROR_DOCS_PATH, renderErrorsHtml } from '../error-catalogue.js';

export async function errorDocsRoutes(app: FastifyInstance): Promise<void> {
  const html = renderErrorsHtml();
  // Hidden from the OpenAPI document, like swagger-ui's own pages: it is documentation, not API.
  app.get(ERROR_DOCS_PATH, { schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(html));
}
