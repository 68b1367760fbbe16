/**
 * A LIMIT bound at run time, for SQLite statements: `LIMIT ${boundLimit()}`, or
 * `boundLimit('@limit')` for a named parameter.
 *
 * SQLite plans a bare `LIMIT ?` with the value bound when it first runs, and marks the
 * statement to be prepared again whenever that parameter is bound anew; better-sqlite3
 * binds every parameter on every run. So each run paid a full prepare (docs/performance.md).
 * Behind a CAST the value is read only when the statement runs: the same plan, prepared once.
 * eslint.config.js refuses a bare bound LIMIT.
 */
export const boundLimit = (param = '?'): string => `CAST(${param} AS INTEGER)`;
