/** API errors, rendered by one handler as RFC 9457 application/problem+json. */
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
