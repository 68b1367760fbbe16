/** API errors, rendered by one handler as RFC 9457 application/problem+json. */
import { ERROR_DOCS_PATH } from './error-catalogue.js';
import { STATUS_CODES } from 'node:http';
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

/** Titles RFC 9110 renamed; Node's STATUS_CODES still has the RFC 7231 ones (413 "Payload Too Large"). */
const RFC_9110_TITLES: Readonly<Record<number, string>> = { 413: 'Content Too Large', 422: 'Unprocessable Content' };

/** The problem's `title`: the status' reason phrase as RFC 9110 names it. */
export function statusTitle(status: number): string {
  return RFC_9110_TITLES[status] ?? STATUS_CODES[status] ?? 'Error';
}

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

export const REJECTION_STATUS: Record<RejectionKind, number> = { not_found: 404, conflict: 409, invalid: 400, gone: 410, unprocessable: 422 };

/** A command's refusal as the problem the API answers; a field it names becomes a pointer into the body. */
export function rejectionProblem(rejection: CommandRejected): ApiError {
  const errors = rejection.field ? [{ pointer: `/body${rejection.field}`, message: rejection.detail }] : [];
  return new ApiError(REJECTION_STATUS[rejection.kind], rejection.code, rejection.detail, errors);
}
