/**
 * Request bodies are JSON: `application/json` on every route, and
 * `application/merge-patch+json` (RFC 7396) on PATCH, whose routes are
 * merge-patches. Everything else, text/plain included (Fastify would hand it
 * over as a string), is a 415 naming what is accepted. Routes with a format of
 * their own (the OAuth token endpoint's form) add a parser in their scope.
 * A route whose body schema is `Type.Optional(...)` takes no body, an empty
 * JSON body or `{}` alike: each is validated (and defaulted) as `{}`.
 */
import { OptionalKind } from '@sinclair/typebox';
import type { FastifyBodyParser, FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { ApiError } from '../problem.js';

const JSON_TYPE = 'application/json';
const MERGE_PATCH_TYPE = 'application/merge-patch+json';

/** The media types a request body of this method may come in (the OpenAPI document lists the same). */
export function acceptedBodyTypes(method: string): string[] {
  return method === 'PATCH' ? [JSON_TYPE, MERGE_PATCH_TYPE] : [JSON_TYPE];
}

type Done = (err: Error | null, body?: unknown) => void;

/**
 * No request body of this API nests deeper than a few levels (a GeoJSON
 * polygon is 4). The limit is checked on the text before anything walks the
 * value recursively, so a hostile body nested thousands deep is a 400, not a
 * stack overflow.
 */
export const MAX_BODY_DEPTH = 32;

/** The 415 for a body of a type the route does not take. */
export function unsupportedMediaType(request: FastifyRequest): ApiError {
  const sent = request.headers['content-type'];
  const accepted = acceptedBodyTypes(request.method).join(' or ');
  const what = sent ? `Content-Type ${sent.split(';')[0]!.trim()} is not accepted` : 'A body needs a Content-Type';
  return new ApiError(415, 'unsupported_media_type', `${what}: send ${accepted}.`);
}

/** Whether a route's body may be left out: its schema is wrapped in TypeBox's Type.Optional (the OpenAPI document marks it not required). */
export function bodyIsOptional(schema: RouteOptions['schema'] | undefined): boolean {
  return (schema?.body as { [OptionalKind]?: string } | undefined)?.[OptionalKind] === 'Optional';
}

export function registerJsonBodies(app: FastifyInstance): void {
  // Fastify's own parser refuses prototype keys with the same error as broken JSON: it is kept, and the refusal explained.
  const strict = app.getDefaultJsonParser('error', 'error') as (request: FastifyRequest, body: string, done: Done) => void;
  const parseJson: FastifyBodyParser<string> = (request, body, done) => {
    // Fastify's parser refuses an empty JSON body; where the body is optional, clients (curl -d '') mean "none".
    if (body.length === 0 && bodyIsOptional(request.routeOptions.schema)) return done(null, undefined);
    if (nestsDeeperThan(body, MAX_BODY_DEPTH)) return done(tooDeep());
    strict(request, body, (err, value) => {
      const pointer = err && (err as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? prototypeKey(body) : null;
      if (pointer) return done(prototypeKeyRefused(pointer));
      done(err, value);
    });
  };

  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(JSON_TYPE, { parseAs: 'string' }, parseJson);
  app.addContentTypeParser(MERGE_PATCH_TYPE, { parseAs: 'string' }, (request, body, done) => {
    if (request.method !== 'PATCH') return done(unsupportedMediaType(request), undefined);
    parseJson(request, body as string, done);
  });

  // Ajv sees no body as `undefined`, which no object schema accepts ("/body: must be object"): it is validated as {}.
  app.addHook('onRoute', (route) => {
    if (!bodyIsOptional(route.schema)) return;
    const own = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
    route.preValidation = [defaultToEmptyObject, ...own];
  });
}

async function defaultToEmptyObject(request: FastifyRequest): Promise<void> {
  request.body ??= {};
}

function tooDeep(): ApiError {
  return new ApiError(400, 'invalid_body', `The body nests objects and arrays deeper than ${MAX_BODY_DEPTH} levels; no request of this API needs that.`);
}

/** Whether brackets nest deeper than `max` in JSON text (brackets inside strings do not count). One pass, no recursion. */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* backslash: skip the escaped char */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return false;
}

function prototypeKeyRefused(pointer: string): ApiError {
  return new ApiError(
    400,
    'invalid_body',
    `The body is valid JSON, but its key at ${pointer} is refused for safety: __proto__ and constructor.prototype keys could change object prototypes.`,
    [{ pointer, message: 'is refused: such a key could change object prototypes' }],
  );
}

/**
 * The pointer of the first key Fastify's parser refuses (`__proto__`, or
 * `prototype` inside a `constructor` object), or null if the text is not JSON
 * at all. Only runs on the error path.
 */
function prototypeKey(text: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return find(value, '/body');
}

function find(node: unknown, path: string): string | null {
  if (typeof node !== 'object' || node === null) return null;
  for (const key of Object.keys(node)) {
    const here = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const child = (node as Record<string, unknown>)[key];
    if (key === '__proto__') return here;
    if (key === 'constructor' && typeof child === 'object' && child !== null && Object.hasOwn(child, 'prototype')) {
      return `${here}/prototype`;
    }
    const deeper = find(child, here);
    if (deeper) return deeper;
  }
  return null;
}
