/**
 * "Responses match the document": loads the OpenAPI document from the app
 * itself and validates response bodies against the operation's response
 * schema with ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

// ajv-formats is CommonJS: its default export arrives wrapped under NodeNext.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

interface ResponseObject {
  content?: Record<string, { schema?: unknown }>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<
    string,
    Record<string, { requestBody?: { content: Record<string, unknown> }; responses?: Record<string, ResponseObject & { $ref?: string }> }>
  >;
  webhooks?: Record<string, unknown>;
  components?: Record<string, unknown>;
  [key: string]: unknown;
}

export async function loadOpenApi(app: FastifyInstance): Promise<OpenApiDocument> {
  const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
  if (res.statusCode !== 200) throw new Error(`GET /v1/openapi.json: ${res.statusCode} ${res.body}`);
  return res.json() as OpenApiDocument;
}

const DOC_ID = 'https://fleet.invalid/openapi.json';
const pointerPart = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export class ResponseValidator {
  private readonly ajv: Ajv2020;

  constructor(readonly doc: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    // The whole document as one schema resource, so `#/components/...` references resolve.
    this.ajv.addSchema({ ...doc, $id: DOC_ID }, DOC_ID);
  }

  /** The document's path template a concrete URL falls under (query ignored); static segments win over parameters, as in routing. */
  pathOf(url: string): string {
    const path = url.split('?')[0]!;
    const params = (t: string) => t.split('{').length - 1;
    const matching = Object.keys(this.doc.paths)
      .filter((t) => new RegExp(`^${t.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path))
      .sort((a, b) => params(a) - params(b));
    if (!matching[0]) throw new Error(`no path of the document matches ${path}`);
    return matching[0];
  }

  private resolve(ref: string): unknown {
    return ref
      .replace(/^#\//, '')
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], this.doc);
  }

  /**
   * Throws unless `body` matches the documented response of `method path`
   * (a path template as in the document, e.g. /v1/devices/{id}) for `status`
   * and `contentType` (the media type without parameters; the first documented one when absent).
   * `body` undefined means the response had none (a 204): the document must not promise one.
   */
  check(method: string, path: string, status: number, body: unknown, contentType?: string): void {
    const op = this.doc.paths[path]?.[method.toLowerCase()];
    if (!op) throw new Error(`the document has no operation ${method} ${path}`);
    let location = `#/paths/${pointerPart(path)}/${method.toLowerCase()}/responses/${status}`;
    let response = op.responses?.[String(status)] as (ResponseObject & { $ref?: string }) | undefined;
    if (response?.$ref) {
      // Shared responses (429 RateLimited) live under components.
      location = response.$ref;
      response = this.resolve(response.$ref) as ResponseObject | undefined;
    }
    if (!response) throw new Error(`${method} ${path} documents no ${status} response`);
    const types = Object.keys(response.content ?? {});
    if (body === undefined) {
      if (types.length > 0) throw new Error(`${method} ${path} ${status} documents a body (${types.join(', ')}) but none was sent`);
      return;
    }
    const type = contentType?.split(';')[0]!.trim() || types[0];
    if (!type || !response.content?.[type]?.schema) {
      throw new Error(`${method} ${path} ${status} documents no schema for ${type ?? 'any media type'}`);
    }
    const ref = `${DOC_ID}${location}/content/${pointerPart(type)}/schema`;
    const validate = this.ajv.getSchema(ref) ?? this.ajv.compile({ $ref: ref });
    if (!validate(body)) {
      throw new Error(`${method} ${path} ${status} does not match the document: ${this.ajv.errorsText(validate.errors)}`);
    }
  }
}

/** Validates an inject() response (status, media type and body; an empty body as none) against the document. */
export function expectDocumented(
  v: ResponseValidator,
  method: string,
  path: string,
  res: { statusCode: number; headers: Record<string, unknown>; body: string; json(): unknown },
): void {
  v.check(method, path, res.statusCode, res.body === '' ? undefined : res.json(), String(res.headers['content-type'] ?? ''));
}
