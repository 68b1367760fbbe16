/**
 * Why a command was refused, in terms the caller can act on. Commands throw
 * it; the API maps it to a problem (`not_found` 404, `conflict` 409,
 * `invalid` 400, `gone` 410, `unprocessable` 422) with `code` and `detail` unchanged, and the CLI
 * prints the detail. Anything else a command throws is a bug or an outage.
 */
export type RejectionKind = 'not_found' | 'conflict' | 'invalid' | 'gone' | 'unprocessable';

export class CommandRejected extends Error {
  constructor(
    readonly kind: RejectionKind,
    /** Machine-readable, stable: `imei_taken`, `external_id_taken`, `not_found`. */
    readonly code: string,
    readonly detail: string,
    /** For `invalid`: which input field, as a JSON pointer into the command's input (`/imei`). */
    readonly field?: string,
  ) {
    super(detail);
    this.name = 'CommandRejected';
  }
}
