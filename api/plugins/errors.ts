/**
 * The one error handler: every failure leaves as problem+json with a code,
 * the request id, and field pointers for validation errors.
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CommandRejected } from '../../core/commands/rejection.js';
import { ApiError, problemType, rejectionProblem, statusTitle, type FieldError } from '../problem.js';
import { unsupportedMediaType } from './json-bodies.js';

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The public base URL's path ('' at the root), put in front of problem `type` references. */
    problemTypePrefix: string;
  }
}

/** The path of the public base URL, without a trailing slash: '' for `http://host:3000`, '/fleet' for `https://host/fleet/`. */
export function pathPrefixOf(publicUrl: string): string {
  return new URL(publicUrl).pathname.replace(/\/+$/, '');
}

/**
 * `fallback`: a chance to answer a request no route matched (the customer
 * panel's client-side routes) before the 404; true when it did.
 */
export function registerErrorHandling(
  app: FastifyInstance,
  publicUrl: string,
  fallback: (request: FastifyRequest, reply: FastifyReply) => Promise<boolean> = async () => false,
): void {
  app.decorate('problemTypePrefix', pathPrefixOf(publicUrl));
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof ApiError) return sendProblem(request, reply, err);
    if (err instanceof CommandRejected) return sendProblem(request, reply, rejectionProblem(err));
    if (err.validation) {
      const context = POINTER_PREFIX[err.validationContext ?? 'body'] ?? 'body';
      const errors = (err.validation as AjvError[]).map((v) => toFieldError(context, v));
      return sendProblem(
        request,
        reply,
        new ApiError(400, 'validation_failed', errors.map((e) => `${e.pointer}: ${e.message}`).join('; '), errors),
      );
    }
    const status = err.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err }, 'request failed');
      return sendProblem(request, reply, new ApiError(status, 'internal_error', 'An unexpected error occurred; it has been logged.'));
    }
    return sendProblem(request, reply, requestProblem(err, request));
  });

  app.setNotFoundHandler(async (request, reply) => {
    if (await fallback(request, reply)) return reply;
    return sendProblem(request, reply, new ApiError(404, 'route_not_found', `No route ${request.method} ${request.url.split('?')[0]}`));
  });
}

/** Fastify names request parts after its schema keys; pointers use the shorter names. */
const POINTER_PREFIX: Record<string, string> = { body: 'body', querystring: 'query', params: 'params', headers: 'headers' };

function toFieldError(context: string, v: AjvError): FieldError {
  const base = `/${context}${v.instancePath}`;
  if (v.keyword === 'required') return { pointer: `${base}/${String(v.params.missingProperty)}`, message: 'is required' };
  if (v.keyword === 'additionalProperties') {
    return { pointer: `${base}/${String(v.params.additionalProperty)}`, message: 'is not an accepted field' };
  }
  if (v.keyword === 'format') return { pointer: base, message: FORMAT_MESSAGES[String(v.params.format)] ?? v.message ?? v.keyword };
  return { pointer: base, message: v.message ?? v.keyword };
}

/** What a format error asks for, in the caller's terms rather than Ajv's `must match format "date-time"`. */
const FORMAT_MESSAGES: Record<string, string> = {
  'date-time': 'must be an RFC 3339 time with Z or an offset, e.g. 2026-11-22T08:00:00Z',
  date: 'must be a calendar date YYYY-MM-DD',
};

export function sendProblem(request: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return reply
    .status(err.status)
    .type('application/problem+json')
    .send({
      type: problemType(err.code, request.server.problemTypePrefix),
      title: statusTitle(err.status),
      status: err.status,
      detail: err.detail,
      instance: request.url.split('?')[0],
      code: err.code,
      request_id: request.id,
      errors: err.errors,
    });
}

/** A 4xx Fastify raised before our code ran (body size, content type, unreadable body), as our problem. */
function requestProblem(err: FastifyError, request: FastifyRequest): ApiError {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'body_too_large', `The request body is larger than the ${request.routeOptions.bodyLimit} bytes this route accepts.`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return unsupportedMediaType(request);
    default:
      return new ApiError(err.statusCode ?? 400, err.statusCode === 400 ? 'invalid_body' : 'request_error', err.message);
  }
}

/**
 * Fastify's `frameworkErrors`: failures found while routing, before any hook or
 * the error handler (a malformed percent-encoded path, an over-long parameter).
 */
export function frameworkErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  let problem: ApiError;
  if (err.code === 'FST_ERR_BAD_URL') {
    problem = new ApiError(400, 'bad_url', `The URL has malformed percent-encoding: ${err.message}; each % must start a %XX escape of UTF-8.`);
  } else if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    problem = new ApiError(414, 'uri_too_long', 'A path parameter of the URL is too long.');
  } else {
    request.log.error({ err }, 'routing failed');
    problem = new ApiError(500, 'internal_error', 'An unexpected error occurred; it has been logged.');
  }
  sendProblem(request, reply, problem);
}

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser refused (a bad
 * Content-Length, a malformed request line, headers too large). There is no
 * request, so no request id or instance; the connection is closed after it.
 */
export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, detail]: [number, string, string] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'request_timeout', 'The request was not received in time.']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'headers_too_large', 'The request headers are too large.']
        : [400, 'bad_request', `The request is not valid HTTP/1.1 (${err.message}).`];
  this.log.trace({ err }, 'client error');
  if (socket.writable) {
    const title = statusTitle(status);
    const body = JSON.stringify({ type: problemType(code, this.problemTypePrefix), title, status, detail, code, errors: [] });
    socket.write(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
