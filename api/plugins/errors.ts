/**
 * The one error handler: every failure leaves as problem+json with a code,
 * the request id, and field pointers for validation errors.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, TITLES, type FieldError } from '../problem.js';

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof ApiError) return sendProblem(request, reply, err);
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
    const code =
      err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        ? 'body_too_large'
        : err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? 'unsupported_media_type'
          : err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || status === 400
            ? 'invalid_body'
            : 'request_error';
    return sendProblem(request, reply, new ApiError(status, code, err.message));
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, new ApiError(404, 'route_not_found', `No route ${request.method} ${request.url.split('?')[0]}`)),
  );
}

/** Fastify names request parts after its schema keys; pointers use the shorter names. */
const POINTER_PREFIX: Record<string, string> = { body: 'body', querystring: 'query', params: 'params', headers: 'headers' };

function toFieldError(context: string, v: AjvError): FieldError {
  const base = `/${context}${v.instancePath}`;
  if (v.keyword === 'required') return { pointer: `${base}/${String(v.params.missingProperty)}`, message: 'is required' };
  if (v.keyword === 'additionalProperties') {
    return { pointer: `${base}/${String(v.params.additionalProperty)}`, message: 'is not an accepted field' };
  }
  return { pointer: base, message: v.message ?? v.keyword };
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return reply
    .status(err.status)
    .type('application/problem+json')
    .send({
      type: `https://docs.fleet.example/errors/${err.code}`,
      title: TITLES[err.status] ?? 'Error',
      status: err.status,
      detail: err.detail,
      instance: request.url.split('?')[0],
      code: err.code,
      request_id: request.id,
      errors: err.errors,
    });
}
