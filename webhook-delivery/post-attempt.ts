/**
 * One webhook delivery attempt over undici (a connection pool per origin that
 * costs less than half of node:http per request) with the connect-time address
 * guard of url-safety.ts as the pool's `lookup`. Success is a 2xx status with
 * the whole exchange (connect, send, status, and the capped body read) done
 * within the timeout. Redirects are never followed: a 3xx is a failure. Never
 * throws: every outcome is an AttemptResult, so the delivery engine only
 * decides what to do next. With pooled agents, a request whose connection
 * closes before any answer is sent once more on a new connection (a keep-alive
 * socket the receiver closed while idle; the receiver may see it twice, which
 * at-least-once delivery allows).
 */
import { isIP } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { Agent, type Dispatcher } from 'undici';
import { FORBIDDEN_ADDRESS_CODE, type WebhookLookup } from './url-safety.js';

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 4096;

export type AttemptError =
  | 'timeout'
  | 'connection_refused'
  | 'connection_reset'
  | 'forbidden_address'
  | 'redirect_not_followed'
  | 'dns_failure'
  | 'unreachable'
  | 'tls_error'
  | 'invalid_response'
  | 'invalid_url'
  | 'invalid_request'
  | 'request_failed';

export interface AttemptResult {
  /** 2xx within the timeout. */
  ok: boolean;
  /** The receiver's status code, when a response started (also on a timeout during its body). */
  status: number | null;
  latencyMs: number;
  /** The first bytes of the response body as UTF-8, at most maxResponseBytes (no split characters). */
  responseBodyStart: string;
  /** Why the attempt failed without a usable status; null for any answered non-3xx status. */
  error: AttemptError | null;
  /** The node error message behind `error`, for logs and the deliveries list. */
  errorDetail?: string;
  /** The raw Retry-After header, when the receiver sent one. */
  retryAfter?: string;
}

export interface WebhookAgents {
  /** The pool that connects through `lookup` (one per lookup function; a process uses one). */
  dispatcherFor(lookup: WebhookLookup | undefined): Dispatcher;
  /** Changes the pool size (a customer's rate changed): later requests use a pool of the new size. */
  resize(maxSocketsPerOrigin: number): void;
  /** Closes every pooled socket (shutdown, tests). */
  destroy(): void;
}

export interface WebhookAgentOptions {
  /** Concurrent connections per origin (host:port); more requests queue in the pool. */
  maxSocketsPerOrigin?: number;
  /** Idle pooled sockets are closed after this; below node's 5 s server default, to avoid reusing a socket the receiver is closing. */
  idleTimeoutMs?: number;
  /** Extra trusted CA certificates (PEM) for https receivers; node's bundled roots otherwise. */
  ca?: string | string[];
}

/**
 * Keep-alive pools for webhook delivery. undici pools per origin, so a busy
 * endpoint reuses its connections (and TLS sessions) and one origin's pool
 * limit does not hold back another's. The dispatcher gives every customer
 * agents of its own: two customers whose endpoints share a host never wait
 * for each other's sockets.
 */
export function createWebhookAgents({ maxSocketsPerOrigin = 16, idleTimeoutMs = 4000, ca }: WebhookAgentOptions = {}): WebhookAgents {
  let size = maxSocketsPerOrigin;
  const pools = new Map<WebhookLookup | undefined, Agent>();
  /** Pools a resize replaced, until their last requests finish. */
  const retired = new Set<Agent>();
  const pool = (lookup: WebhookLookup | undefined) =>
    new Agent({
      connections: size,
      keepAliveTimeout: idleTimeoutMs,
      keepAliveMaxTimeout: idleTimeoutMs,
      // The exchange's own timer (postWebhook) bounds everything; these only must not cut it shorter.
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: { ...(lookup ? { lookup } : {}), ...(ca !== undefined ? { ca } : {}) },
    });
  return {
    dispatcherFor(lookup) {
      let agent = pools.get(lookup);
      if (!agent) {
        agent = pool(lookup);
        pools.set(lookup, agent);
      }
      return agent;
    },
    resize(n) {
      if (n === size) return;
      size = n;
      // Requests in flight finish on the old pools, which close once idle.
      for (const agent of pools.values()) {
        retired.add(agent);
        void agent.close().catch(() => undefined).finally(() => retired.delete(agent));
      }
      pools.clear();
    },
    destroy() {
      for (const agent of [...pools.values(), ...retired]) void agent.destroy().catch(() => undefined);
      pools.clear();
      retired.clear();
    },
  };
}

export interface PostWebhookInput {
  url: URL | string;
  /** The exact bytes to send (they are what was signed). */
  body: Buffer;
  headers?: Record<string, string>;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** Resolves the host; pass guardedLookup(allowPrivate) so forbidden addresses are refused at connect time. */
  lookup?: WebhookLookup;
  /** Pooled connections; without them each attempt opens and closes its own connection. */
  agents?: WebhookAgents;
}

function classify(err: NodeJS.ErrnoException): AttemptError {
  // undici wraps some socket errors; the system error, when there is one, is the cause.
  const cause = (err as { cause?: NodeJS.ErrnoException }).cause;
  const code = (cause?.code && err.code === 'UND_ERR_SOCKET' ? cause.code : err.code) ?? '';
  if (code === FORBIDDEN_ADDRESS_CODE) return 'forbidden_address';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') {
    return 'connection_reset';
  }
  if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || code === 'EAI_NODATA') return 'dns_failure';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EHOSTDOWN' || code === 'ENETDOWN') return 'unreachable';
  if (code.startsWith('HPE_')) return 'invalid_response';
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(code)) {
    return 'tls_error';
  }
  if (code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN' || code === 'ERR_HTTP_INVALID_HEADER_VALUE' || code === 'UND_ERR_INVALID_ARG') {
    return 'invalid_request';
  }
  return 'request_failed';
}

/** Runs the lookup on an IP-literal host: node skips `lookup` for those, so the guard would never see them. */
function checkLiteralHost(hostname: string, lookup: WebhookLookup): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    try {
      lookup(hostname, { all: true }, (err) => resolve(err));
    } catch (err) {
      resolve(err as NodeJS.ErrnoException);
    }
  });
}

/** What an attempt needs of its URL: parsed once per URL string (every attempt to an endpoint has the same). */
interface Target {
  origin: string;
  path: string;
  /** The host when it is an IP address (brackets of IPv6 removed), else null. */
  ipLiteral: string | null;
}

const targets = new Map<string, Target | { error: string }>();
/** URLs kept parsed, at most: past it the cache starts over (endpoints are far fewer). */
const TARGETS_MAX = 10_000;

function targetOf(url: URL | string): Target | { error: string } {
  const key = typeof url === 'string' ? url : url.href;
  let target = targets.get(key);
  if (target) return target;
  target = parseTarget(url);
  if (targets.size >= TARGETS_MAX) targets.clear();
  targets.set(key, target);
  return target;
}

function parseTarget(url: URL | string): Target | { error: string } {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return { error: 'not a valid absolute URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { error: `unsupported scheme ${parsed.protocol}` };
  const hostname = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  return { origin: parsed.origin, path: parsed.pathname + parsed.search, ipLiteral: isIP(hostname) !== 0 ? hostname : null };
}

/** Delivers `body` once. Resolves with the outcome; never rejects. */
export async function postWebhook({
  url,
  body,
  headers = {},
  timeoutMs = DEFAULT_TIMEOUT_MS,
  maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES,
  lookup,
  agents,
}: PostWebhookInput): Promise<AttemptResult> {
  const started = performance.now();
  const target = targetOf(url);
  if ('error' in target) return attemptOutcome(started, null, [], 'invalid_url', target.error);
  if (lookup && target.ipLiteral !== null) {
    const err = await checkLiteralHost(target.ipLiteral, lookup);
    if (err) return attemptOutcome(started, null, [], classify(err), err.message);
  }

  // Without pooled agents, a connection of its own for this attempt, closed after it.
  const oneShot = agents ? null : createWebhookAgents({ maxSocketsPerOrigin: 1 });
  const dispatcher = (agents ?? oneShot!).dispatcherFor(lookup);
  const request: Dispatcher.DispatchOptions = {
    origin: target.origin,
    path: target.path,
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body,
  };
  try {
    return await exchange(dispatcher, request, { started, timeoutMs, maxResponseBytes, retryStale: agents !== undefined });
  } finally {
    if (oneShot) oneShot.destroy();
  }
}

/**
 * The exchange itself, on undici's handler interface (no response stream, no
 * AbortSignal: about a third less CPU per request than `request()`). One timer
 * bounds the whole exchange; the first of timeout, error, capped body or end
 * settles it, and later callbacks are ignored.
 */
function exchange(
  dispatcher: Dispatcher,
  request: Dispatcher.DispatchOptions,
  o: { started: number; timeoutMs: number; maxResponseBytes: number; retryStale: boolean },
): Promise<AttemptResult> {
  return new Promise((resolve) => {
    let settled = false;
    let status: number | null = null;
    let retryAfter: string | undefined;
    let received = 0;
    let chunks: Buffer[] = [];
    let controller: Dispatcher.DispatchController | null = null;
    let retried = false;
    const settle = (error: AttemptError | null, detail?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(attemptOutcome(o.started, status, chunks, error, detail, retryAfter));
    };
    const timer = setTimeout(() => {
      settle('timeout', `no complete response within ${o.timeoutMs} ms`);
      controller?.abort(new Error('webhook attempt timed out'));
    }, o.timeoutMs);
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        // Timed out while waiting for a pooled connection: never send.
        if (settled) c.abort(new Error('webhook attempt timed out'));
      },
      onResponseStart(_c, statusCode, headers) {
        status = statusCode;
        const ra = headers['retry-after'];
        if (typeof ra === 'string') retryAfter = ra;
      },
      onResponseData(c, chunk) {
        if (settled) return;
        const room = o.maxResponseBytes - received;
        chunks.push(room < chunk.length ? chunk.subarray(0, room) : chunk);
        received += Math.min(room, chunk.length);
        // Enough for the deliveries list; reading further would let a receiver stream at us forever.
        if (received >= o.maxResponseBytes) {
          settle(null);
          c.abort(new Error('response body cap reached'));
        }
      },
      onResponseEnd() {
        settle(null);
      },
      onResponseError(_c, err) {
        if (settled) return;
        const e = err as NodeJS.ErrnoException;
        // A pooled connection the receiver closed while idle fails before any answer: that says
        // nothing about the receiver, so go once more on a fresh connection.
        if (o.retryStale && !retried && status === null && classify(e) === 'connection_reset') {
          retried = true;
          controller = null;
          chunks = [];
          dispatcher.dispatch(request, handler);
          return;
        }
        settle(classify(e), e.message);
      },
    };
    dispatcher.dispatch(request, handler);
  });
}

/** An attempt's outcome from what the exchange got; `error` null: the status decides (2xx ok, 3xx a redirect not followed). */
function attemptOutcome(
  started: number,
  status: number | null,
  chunks: Buffer[],
  error: AttemptError | null,
  detail?: string,
  retryAfter?: string,
): AttemptResult {
  const redirect = error === null && status !== null && status >= 300 && status < 400;
  return {
    ok: error === null && status !== null && status >= 200 && status < 300,
    status,
    latencyMs: Math.round(performance.now() - started),
    // Decode without the incomplete character a byte cap may have cut.
    responseBodyStart: chunks.length === 0 ? '' : new StringDecoder('utf8').write(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)),
    error: redirect ? 'redirect_not_followed' : error,
    ...(detail !== undefined ? { errorDetail: detail } : {}),
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  };
}
