/**
 * The error catalogue: every problem `code` the API answers with, its status,
 * what it means and what a client should do. This table is the one source:
 * the API serves it as HTML at /docs/errors (problem `type` URIs point at its
 * anchors), and docs/errors.md is generated from it (`npm run docs:errors`;
 * a test fails when the file is stale or a code the source emits is missing).
 */

export interface CatalogueEntry {
  code: string;
  /** The HTTP status; `null` when it varies (the entry says how). */
  status: number | null;
  meaning: string;
  action: string;
}

export const ERROR_CATALOGUE: readonly CatalogueEntry[] = [
  {
    code: 'validation_failed',
    status: 400,
    meaning:
      'The request parsed, but a field breaks a rule: a missing or unknown field, a wrong type, a value out of range, a time without `Z` or offset, an unknown event kind. `errors[]` lists each field as a pointer prefixed with the request part (`/body/imei`, `/query/limit`, `/params/id`) and a message.',
    action: 'Fix the fields named in `errors[]` and send the request again; repeating it unchanged gives the same answer.',
  },
  {
    code: 'invalid_body',
    status: 400,
    meaning:
      'The body could not be read as the JSON the route takes: it is not JSON, it is nested deeper than 32 levels, or it holds a `__proto__` or `constructor.prototype` key, which is refused for safety.',
    action: 'Send well-formed JSON of ordinary objects; the `detail` says which rule the body broke.',
  },
  {
    code: 'invalid_cursor',
    status: 400,
    meaning: 'The `cursor` query parameter is not one this API issued (truncated, edited or from another deployment).',
    action: 'Use `pagination.next_cursor` exactly as returned, or start the list again without a cursor.',
  },
  {
    code: 'cursor_mismatch',
    status: 400,
    meaning: 'The cursor was issued for another list, or for the same list with other filters. A cursor carries a hash of its list and filters.',
    action: 'Keep the filters of the request that returned the cursor, or start again without a cursor.',
  },
  {
    code: 'range_too_large',
    status: 400,
    meaning:
      'The time window asked for is too wide: position history spans at most 31 days (`from` inclusive, `to` exclusive), driver scores at most 92 days.',
    action: 'Split the period into several requests of an allowed width.',
  },
  {
    code: 'bad_url',
    status: 400,
    meaning: 'The URL holds malformed percent-encoding: a `%` that does not start a `%XX` escape of UTF-8.',
    action: 'Percent-encode path and query values properly (most HTTP libraries do it for you).',
  },
  {
    code: 'bad_request',
    status: 400,
    meaning:
      'The request is not valid HTTP/1.1 (for example a malformed request line or Content-Length). It was refused before routing, so the problem has no `request_id` or `instance`, and the connection is closed.',
    action: 'Fix the client or proxy that produced the request.',
  },
  {
    code: 'request_error',
    status: null,
    meaning:
      'A 4xx refusal raised by the HTTP framework that has no more specific code; the status and `detail` say what was wrong. Rare: most such refusals have their own code in this list.',
    action: 'Read `detail`, correct the request, and report it if it looks like a fault of the API.',
  },
  {
    code: 'command_type_unsupported',
    status: 400,
    meaning:
      "The device's protocol cannot carry this command type (`text` needs a driver display, which only JT/T 808 has). The `detail` names the type, the protocol and the types it supports.",
    action: 'Send one of the types `GET /v1/devices/{id}/command-types` lists for the device.',
  },
  {
    code: 'unauthenticated',
    status: 401,
    meaning: 'The route needs a credential and none was sent (no `Authorization: Bearer ...` header). The answer carries `WWW-Authenticate: Bearer`.',
    action: 'Send an API key (`fleet_key_...`) or an OAuth access token (`fleet_at_...`) as `Authorization: Bearer <credential>`.',
  },
  {
    code: 'invalid_credentials',
    status: 401,
    meaning:
      'A credential was sent but is not accepted: unknown, malformed, revoked, or an expired access token; or a panel session cookie whose session ended or expired. `WWW-Authenticate` carries `error="invalid_token"` and the reason.',
    action: 'Use a current API key, or fetch a new access token from `POST /v1/oauth/token` and retry. In the panel: log in again.',
  },
  {
    code: 'invalid_login',
    status: 401,
    meaning:
      'Answered by `POST /v1/sessions` (panel login): the email or the password is wrong. An unknown email gets the same answer, after the same work, so accounts cannot be probed. Failed logins count towards `too_many_login_attempts`.',
    action: 'Check the email and password; an operator can create a login with `fleet customer create --email`.',
  },
  {
    code: 'insufficient_scope',
    status: 403,
    meaning:
      'The credential is valid but lacks the scope this request needs (a write scope also grants the matching read). `WWW-Authenticate` names the scope(s) needed.',
    action: 'Use a credential created with the needed scope; retrying with the same one will not help.',
  },
  {
    code: 'csrf_failed',
    status: 403,
    meaning:
      'A POST, PUT, PATCH or DELETE authenticated by the panel session cookie came without `X-CSRF-Token`, or with one that is not the `csrf_token` of that session. This is what stops another site from making a logged-in browser change things.',
    action: 'Send the `csrf_token` of the login answer (or of `GET /v1/sessions/current`) as `X-CSRF-Token`. API clients: send a bearer credential instead of a cookie.',
  },
  {
    code: 'not_found',
    status: 404,
    meaning:
      'No such resource for your account: the id is unknown, deleted, or belongs to another customer (the answer is the same in every case, so ids of other customers cannot be probed).',
    action: 'Check the id; list the collection to find current ones.',
  },
  {
    code: 'route_not_found',
    status: 404,
    meaning: 'No route matches this method and path.',
    action: 'Check the path and method against the OpenAPI document at `/v1/openapi.json`.',
  },
  {
    code: 'request_timeout',
    status: 408,
    meaning: 'The request was not received completely in time; the connection is closed.',
    action: 'Retry; if it persists, check the network between the client and the API.',
  },
  {
    code: 'command_not_cancellable',
    status: 409,
    meaning: 'The command has left the queue: it was sent (the unit may have acted on it), or it is finished (succeeded, failed, expired, rejected).',
    action: 'Read it with `GET /v1/commands/{id}`. To undo an engine stop, send `engine_resume`.',
  },
  {
    code: 'command_not_sendable',
    status: 409,
    meaning:
      'Not answered by the API: the gateway is refused a send of a command that is no longer queued (cancelled, expired, finished) or was already sent twice (the retry-once rule, docs/commands.md).',
    action: 'Nothing to do as a client; the command keeps the status `GET /v1/commands/{id}` shows.',
  },
  {
    code: 'imei_taken',
    status: 409,
    meaning:
      'A device with this IMEI is already registered, by any customer (the message does not say whose). An IMEI names one tracker, so it can be registered once.',
    action: 'Do not retry. If the tracker moved to you from another account, it must be removed there first.',
  },
  {
    code: 'terminal_taken',
    status: 409,
    meaning: 'A device with this JT/T 808 `terminal_id` is already registered; the gateway matches frames on it, so it must be unique.',
    action: 'Check the terminal id the unit sends in its header; do not retry unchanged.',
  },
  {
    code: 'external_id_taken',
    status: 409,
    meaning: 'One of your drivers already has this `external_id`.',
    action: 'Use the existing driver (find it in `GET /v1/drivers`) or choose another `external_id`.',
  },
  {
    code: 'email_taken',
    status: 409,
    meaning: 'A panel user with this email already exists (emails are unique across the platform, whatever their letter case).',
    action: 'Use another email, or log in with the existing user.',
  },
  {
    code: 'already_exists',
    status: 409,
    meaning:
      'The resource this request would create already exists under the same id: the server makes ids at random, so this only happens when the same creation is decided twice at once.',
    action: 'Read the resource (or list them) to see whether your earlier request created it; retry only if it did not.',
  },
  {
    code: 'body_too_large',
    status: 413,
    meaning: 'The request body is larger than the route accepts (256 KiB for most routes; the `detail` gives the limit).',
    action: 'Send a smaller body, for example a geofence polygon with fewer vertices.',
  },
  {
    code: 'uri_too_long',
    status: 414,
    meaning: 'A path parameter of the URL is longer than any id this API issues.',
    action: 'Check the id in the path.',
  },
  {
    code: 'unsupported_media_type',
    status: 415,
    meaning: 'The body has a Content-Type this route does not accept; the `detail` lists the accepted types.',
    action: 'Send `Content-Type: application/json` (or `application/merge-patch+json` for PATCH) with a JSON body.',
  },
  {
    code: 'idempotency_key_reused',
    status: 422,
    meaning:
      'The `Idempotency-Key` was used in the last 24 hours for another request (another device, type, params or ttl_s). A key names one request: its retries get the same command.',
    action: 'Use a new key for a new command; retry the original request unchanged to get its command.',
  },
  {
    code: 'rate_limited',
    status: 429,
    meaning:
      "Your account's token bucket is empty: requests arrived faster than the plan allows (a per-minute rate with a burst). `Retry-After` says how many seconds to wait; every response carries `RateLimit-Policy`, `RateLimit` and `X-RateLimit-*` headers.",
    action: 'Wait `Retry-After` seconds before the next request, and pace requests by the `RateLimit` headers.',
  },
  {
    code: 'unknown_last_event_id',
    status: 400,
    meaning:
      'Answered by `GET /v1/stream`: `Last-Event-ID` is past the end of the log, also after this node waited 5 s to catch up: it came from another platform or store, or was made up.',
    action: 'Reconnect without `Last-Event-ID` (the stream then starts live), and read what you missed from `/v1/positions` and `/v1/events`.',
  },
  {
    code: 'too_many_streams',
    status: 429,
    meaning:
      'Answered by `GET /v1/stream`: this credential already holds 10 live streams, or the customer 50, in this API process. The limit counts streams open now, not requests made.',
    action: 'Close a stream you no longer read (one stream carries every device of the fleet), then connect again; `Retry-After` is a suggestion.',
  },
  {
    code: 'too_many_login_attempts',
    status: 429,
    meaning:
      'Answered by `POST /v1/sessions`: 5 logins failed for this email, or from this client address, within 15 minutes. Until the window ends every login for them is refused, even with the right password. `Retry-After` says how many seconds are left. Logins still being checked count too, so logins sent at once are refused beyond the 5 (then `Retry-After` is 1).',
    action: 'Wait `Retry-After` seconds, then log in with the right password.',
  },
  {
    code: 'headers_too_large',
    status: 431,
    meaning: 'The request headers are larger than the server accepts; the connection is closed.',
    action: 'Send fewer or shorter headers (large cookies set by a proxy are a common cause).',
  },
  {
    code: 'internal_error',
    status: 500,
    meaning: 'An unexpected failure on our side. It has been logged with the `request_id` of the problem.',
    action: 'Retry later with backoff; if it persists, report the `request_id`.',
  },
  {
    code: 'webhooks_unavailable',
    status: 503,
    meaning:
      'The webhook delivery routes (deliveries, redeliver, replay, test) need the delivery service, and the API node that answered does not run the webhooks role.',
    action: 'Retry: behind a load balancer another node may answer. Operators: route these paths to nodes started with the webhooks role.',
  },
  {
    code: 'panel_not_built',
    status: 503,
    meaning: 'The customer panel was asked for (`GET /` or one of its pages), but this installation has no build of it (`dist/panel/index.html` is missing).',
    action: 'Operators: run `npm run build` (it builds the API and the panel), then reload; `npm start` does it whenever the sources changed.',
  },
  {
    code: 'not_ready',
    status: 503,
    meaning:
      'Answered by `GET /readyz` only: this node is not ready for traffic, for example its read models lag the event log by more than the bound. `errors[]` names the failing check.',
    action: 'Load balancers: route to another node and probe again. Operators: see the check named in `errors[]`.',
  },
];

const BY_CODE = new Map(ERROR_CATALOGUE.map((e) => [e.code, e]));

export function catalogueEntry(code: string): CatalogueEntry | undefined {
  return BY_CODE.get(code);
}

/** Where the catalogue is served; problem `type` URIs are this path plus `#<code>`. */
export const ERROR_DOCS_PATH = '/docs/errors';

/** Paragraphs above the entries, in both renderings. */
const INTRO = [
  'Every error response of the API is `application/problem+json` (RFC 9457): ' +
    '`{"type", "title", "status", "detail", "instance", "code", "request_id", "errors": [{"pointer", "message"}]}`. ' +
    'Clients branch on `code`, which is stable; `title` is the standard phrase of the status and `detail` a sentence for people, which may change.',
  '`type` links to the entry of this catalogue: `/docs/errors#<code>`, a reference resolved against the URL the request was sent to ' +
    "(behind a proxy, the path of the public base URL is kept in front of it).",
  'The token endpoint `POST /v1/oauth/token` answers its own errors in the OAuth 2.0 shape instead (`{"error", "error_description"}` with ' +
    '`invalid_request`, `invalid_client`, `invalid_scope` or `unsupported_grant_type`, and 429 `rate_limited` with `Retry-After` ' +
    'after 10 failed client authentications in 15 minutes for a client id or an address, or more than 30 tokens a minute for a client), as OAuth client libraries expect.',
];

const statusText = (e: CatalogueEntry) => (e.status === null ? 'varies (a 4xx)' : String(e.status));

/** docs/errors.md, generated: edit api/error-catalogue.ts, then run `npm run docs:errors`. */
export function renderErrorsMarkdown(): string {
  const lines = [
    '# Error catalogue',
    '',
    '<!-- Generated from api/error-catalogue.ts by `npm run docs:errors`; edit the table there, not this file. -->',
    '',
    ...INTRO.flatMap((p) => [p, '']),
    '| code | status |',
    '|---|---|',
    ...ERROR_CATALOGUE.map((e) => `| [\`${e.code}\`](#${e.code}) | ${statusText(e)} |`),
    '',
  ];
  for (const e of ERROR_CATALOGUE) {
    lines.push(`## ${e.code}`, '', `Status: ${statusText(e)}.`, '', e.meaning, '', `What to do: ${e.action}`, '');
  }
  return lines.join('\n');
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Inline markdown of the table's texts: only `code` spans. */
const inline = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');

/** The page served at /docs/errors: one section per code, its id the code (the `#<code>` of problem types). */
export function renderErrorsHtml(): string {
  const sections = ERROR_CATALOGUE.map(
    (e) =>
      `<section id="${e.code}">\n<h2><a href="#${e.code}">${e.code}</a></h2>\n<p>Status: ${statusText(e)}.</p>\n` +
      `<p>${inline(e.meaning)}</p>\n<p>What to do: ${inline(e.action)}</p>\n</section>`,
  );
  const index = ERROR_CATALOGUE.map((e) => `<li><a href="#${e.code}"><code>${e.code}</code></a> (${statusText(e)})</li>`);
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head><meta charset="utf-8"><title>Error catalogue: Fleet telematics API</title>',
    '<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;line-height:1.5}code{background:#f3f3f3;padding:0 .2em}</style>',
    '</head>',
    '<body>',
    '<h1>Error catalogue</h1>',
    ...INTRO.map((p) => `<p>${inline(p)}</p>`),
    `<ul>\n${index.join('\n')}\n</ul>`,
    ...sections,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
