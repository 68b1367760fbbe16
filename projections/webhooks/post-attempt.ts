/**
 * One webhook delivery attempt over node's http/https (not fetch, so the
 * connect-time address guard of url-safety.ts applies through `lookup`).
 * Success is a 2xx status with the whole exchange (connect, send, status,
 * and the capped body read) done within the timeout. Redirects are never
 * followed: a 3xx is a failure. Never throws: every outcome is an
 * AttemptResult, so the delivery engine only decides what to do next.
 * With pooled agents, a request on a reused socket that is reset before any
 * answer is sent once more on a new connection (the receiver may see it twice,
 * which at-least-once delivery allows).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
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
  http: HttpAgent;
  https: HttpsAgent;
  /** Changes the pool size (a customer's rate changed); requests already queued use it too. */
  resize(maxSocketsPerOrigin: number): void;
  /** Closes every pooled socket (shutdown, tests). */
  destroy(): void;
}

export interface WebhookAgentOptions {
  /** Concurrent connections per origin (host:port); more requests queue in the agent. Idle ones are kept up to the same number. */
  maxSocketsPerOrigin?: number;
  /** Idle pooled sockets are closed after this; below node's 5 s server default, to avoid reusing a socket the receiver is closing. */
  idleTimeoutMs?: number;
  /** Extra trusted CA certificates (PEM) for https receivers; node's bundled roots otherwise. */
  ca?: string | string[];
}

/**
 * Keep-alive agents for webhook delivery. Node agents pool per origin, so a
 * busy endpoint reuses its connections (and TLS sessions) and one origin's
 * pool limit does not hold back another's. The dispatcher gives every
 * customer agents of its own: two customers whose endpoints share a host
 * never wait for each other's sockets.
 */
export function createWebhookAgents({
  maxSocketsPerOrigin = 16,
  idleTimeoutMs = 4000,
  ca,
}: WebhookAgentOptions = {}): WebhookAgents {
  // Idle sockets are kept up to the pool size (until idleTimeoutMs): a steady stream reuses them instead of reconnecting.
  const options = { keepAlive: true, maxSockets: maxSocketsPerOrigin, maxFreeSockets: maxSocketsPerOrigin, timeout: idleTimeoutMs };
  const http = new HttpAgent(options);
  const https = new HttpsAgent({ ...options, ...(ca !== undefined ? { ca } : {}) });
  return {
    http,
    https,
    resize(n) {
      for (const agent of [http, https]) {
        agent.maxSockets = n;
        agent.maxFreeSockets = n;
      }
    },
    destroy() {
      http.destroy();
      https.destroy();
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
  const code = err.code ?? '';
  if (code === FORBIDDEN_ADDRESS_CODE) return 'forbidden_address';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED') return 'connection_reset';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || code === 'EAI_NODATA') return 'dns_failure';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EHOSTDOWN' || code === 'ENETDOWN') return 'unreachable';
  if (code.startsWith('HPE_')) return 'invalid_response';
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(code)) {
    return 'tls_error';
  }
  if (code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN' || code === 'ERR_HTTP_INVALID_HEADER_VALUE') {
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
  const elapsed = () => Math.round(performance.now() - started);
  const failure = (error: AttemptError, detail: string): AttemptResult => ({
    ok: false,
    status: null,
    latencyMs: elapsed(),
    responseBodyStart: '',
    error,
    errorDetail: detail,
  });

  let target: URL;
  try {
    target = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return failure('invalid_url', 'not a valid absolute URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return failure('invalid_url', `unsupported scheme ${target.protocol}`);

  const hostname = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
  if (lookup && isIP(hostname) !== 0) {
    const err = await checkLiteralHost(hostname, lookup);
    if (err) return failure(classify(err), err.message);
  }

  return new Promise<AttemptResult>((resolve) => {
    let status: number | null = null;
    let retryAfter: string | undefined;
    let settled = false;
    let res: IncomingMessage | undefined;
    const chunks: Buffer[] = [];
    let received = 0;

    const settle = (error: AttemptError | null, detail?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Decode without the incomplete character a byte cap may have cut.
      const responseBodyStart = new StringDecoder('utf8').write(Buffer.concat(chunks));
      const ok = error === null && status !== null && status >= 200 && status < 300;
      resolve({
        ok,
        status,
        latencyMs: elapsed(),
        responseBodyStart,
        error,
        ...(detail !== undefined ? { errorDetail: detail } : {}),
        ...(retryAfter !== undefined ? { retryAfter } : {}),
      });
    };

    const timer = setTimeout(() => {
      settle('timeout', `no complete response within ${timeoutMs} ms`);
      res?.destroy();
      req?.destroy();
    }, timeoutMs);

    const afterBody = () =>
      settle(status !== null && status >= 300 && status < 400 ? 'redirect_not_followed' : null);

    let req: ReturnType<typeof httpRequest> | undefined;
    const isHttps = target.protocol === 'https:';
    const send = isHttps ? httpsRequest : httpRequest;
    const agent = agents ? (isHttps ? agents.https : agents.http) : false;

    const start = (mayRetryStaleSocket: boolean) => {
      let current: ReturnType<typeof httpRequest>;
      try {
        current = send(target, {
          method: 'POST',
          agent,
          ...(lookup ? { lookup } : {}),
          headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(body.length) },
        });
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        settle(classify(e), e.message);
        return;
      }
      req = current;
      current.on('error', (err: NodeJS.ErrnoException) => {
        // A pooled socket the receiver closed while idle fails on reuse before any answer:
        // that says nothing about the receiver, so go once more on a fresh connection.
        const stale = current.reusedSocket && status === null && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
        if (stale && mayRetryStaleSocket && !settled) return start(false);
        settle(classify(err), err.message);
      });
      current.on('response', (response) => {
        res = response;
        status = response.statusCode ?? null;
        const ra = response.headers['retry-after'];
        if (typeof ra === 'string') retryAfter = ra;
        response.on('error', (err: NodeJS.ErrnoException) => settle(classify(err), err.message));
        response.on('data', (chunk: Buffer) => {
          if (settled) return;
          const room = maxResponseBytes - received;
          chunks.push(room < chunk.length ? chunk.subarray(0, room) : chunk);
          received += Math.min(room, chunk.length);
          if (received >= maxResponseBytes) {
            // Enough for the deliveries list; reading further would let a receiver stream at us forever.
            afterBody();
            response.destroy();
          }
        });
        response.on('end', afterBody);
      });
      current.end(body);
    };
    start(true);
  });
}
