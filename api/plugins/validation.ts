/**
 * Request validation: one Ajv for JSON bodies, another for the query string,
 * path parameters and headers. Only the latter coerces types, because there
 * every value arrives as text ("limit=50"). A JSON body already carries its
 * types; coercing them would turn `"name": ""` into null on a nullable field
 * (clearing it) or `"60"` into 60, instead of refusing the request.
 */
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

const COMMON: Options = { removeAdditional: false, useDefaults: true, allErrors: true };

function ajv(options: Options): Ajv {
  const instance = new Ajv({ ...COMMON, ...options });
  addFormats.default(instance, ['date-time', 'date']);
  return instance;
}

export function registerValidation(app: FastifyInstance): void {
  const body = ajv({ coerceTypes: false });
  const text = ajv({ coerceTypes: true });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema));
}
