/** API errors, rendered by one handler as RFC 9457 application/problem+json. */
import type { CommandRejected, RejectionKind } from '../core/commands/rejection.js';

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

/** The problem's `type` URI: one page per code. */
export function problemType(code: string): string {
  return `https://docs.fleet.example/errors/${code}`;
}

export function notFound(what: string, id: string): ApiError {
  return new ApiError(404, 'not_found', `${what} ${id} does not exist`);
}

const REJECTION_STATUS: Record<RejectionKind, number> = { not_found: 404, conflict: 409, invalid: 400, gone: 410 };

/** A command's refusal as the problem the API answers; a field it names becomes a pointer into the body. */
export function rejectionProblem(rejection: CommandRejected): ApiError {
  const errors = rejection.field ? [{ pointer: `/body${rejection.field}`, message: rejection.detail }] : [];
  return new ApiError(REJECTION_STATUS[rejection.kind], rejection.code, rejection.detail, errors);
}
