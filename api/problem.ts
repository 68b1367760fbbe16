/** API errors, rendered by one handler as RFC 9457 application/problem+json. */
import { ERROR_DOCS_PATH } from './error-catalogue.js';

export interface FieldError {
  /** Where the problem is: `/body/imei`, `/query/limit`, `/params/id`. */
  pointer: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors: FieldError[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

export const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/**
 * The problem's `type`: the code's entry in the error catalogue the API serves,
 * as a URI reference (RFC 9457 allows one) resolved against the request's URL.
 * `pathPrefix` is the path of the public base URL, kept when a proxy mounts the
 * API below the root.
 */
export function problemType(code: string, pathPrefix = ''): string {
  return `${pathPrefix}${ERROR_DOCS_PATH}#${code}`;
}

export function notFound(what: string, id: string): ApiError {
  return new ApiError(404, 'not_found', `${what} ${id} does not exist`);
}
