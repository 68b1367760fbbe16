import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookAgents, postWebhook } from '../../webhook-delivery/post-attempt.js';
import { guardedLookup } from '../../webhook-delivery/url-safety.js';
import { TEST_CERT, TEST_KEY } from './tls-fixture.js';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

let server: Server;
let base: string;
let port: number;
const received: Received[] = [];
let connections = 0;
/** Resolved when the server side of an /endless response closes, i.e. the client stopped and let go. */
let endlessClosed: Promise<void> = Promise.resolve();
let markEndlessClosed = () => {};

/** One receiver, behaviour chosen by path. */
function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const path = req.url ?? '/';
  received.push({ path, headers: req.headers, body });
  switch (path) {
    case '/ok':
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('thanks');
      return;
    case '/fail':
      res.writeHead(500).end('boom');
      return;
    case '/gone':
      res.writeHead(410).end();
      return;
    case '/busy':
      res.writeHead(429, { 'Retry-After': '120' }).end();
      return;
    case '/redirect':
      res.writeHead(302, { Location: '/redirect-target' }).end();
      return;
    case '/never':
      return; // no answer at all
    case '/stall-body':
      res.writeHead(200);
      res.write('partial');
      return; // headers and a bit of body, then nothing
    case '/endless': {
      // Streams until the client goes away: only a client that stops reading gets out.
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      res.on('close', () => {
        res.removeAllListeners('drain');
        markEndlessClosed();
      });
      pump();
      return;
    }
    case '/utf8':
      res.writeHead(200).end('ééé');
      return;
    default:
      res.writeHead(404).end();
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(parts)));
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const body = Buffer.from('{"event":"device.online","event_id":"e1"}');
const allowPrivate = guardedLookup(true);

describe('postWebhook', () => {
  it('succeeds on 200 and sends the exact body bytes with JSON content type and the given headers', async () => {
    const r = await postWebhook({ url: `${base}/ok`, body, headers: { 'X-Service-Event': 'device.online' }, lookup: allowPrivate });
    expect(r).toMatchObject({ ok: true, status: 200, error: null, responseBodyStart: 'thanks' });
    expect(r.latencyMs).toBeGreaterThanOrEqual(0);
    const got = received.find((x) => x.path === '/ok');
    expect(got?.body.equals(body)).toBe(true);
    expect(got?.headers['content-type']).toBe('application/json');
    expect(got?.headers['x-service-event']).toBe('device.online');
  });

  it('reports 500 as a failure with the status and body start', async () => {
    expect(await postWebhook({ url: `${base}/fail`, body })).toMatchObject({
      ok: false,
      status: 500,
      error: null,
      responseBodyStart: 'boom',
    });
  });

  it('reports 410 as a failure with its status', async () => {
    expect(await postWebhook({ url: `${base}/gone`, body })).toMatchObject({ ok: false, status: 410, error: null });
  });

  it('passes Retry-After through', async () => {
    expect(await postWebhook({ url: `${base}/busy`, body })).toMatchObject({ ok: false, status: 429, retryAfter: '120' });
  });

  it('does not follow a redirect', async () => {
    const r = await postWebhook({ url: `${base}/redirect`, body });
    expect(r).toMatchObject({ ok: false, status: 302, error: 'redirect_not_followed' });
    expect(received.some((x) => x.path === '/redirect-target')).toBe(false);
  });

  it('times out a receiver that never answers', async () => {
    const r = await postWebhook({ url: `${base}/never`, body, timeoutMs: 200 });
    expect(r).toMatchObject({ ok: false, status: null, error: 'timeout' });
  });

  it('times out a 200 whose body never finishes: the timeout covers the whole exchange', async () => {
    const r = await postWebhook({ url: `${base}/stall-body`, body, timeoutMs: 200 });
    expect(r).toMatchObject({ ok: false, status: 200, error: 'timeout', responseBodyStart: 'partial' });
  });

  it('reads an endless response body only up to the cap, then lets go', async () => {
    endlessClosed = new Promise<void>((resolve) => (markEndlessClosed = resolve));
    const r = await postWebhook({ url: `${base}/endless`, body, timeoutMs: 5000, maxResponseBytes: 4096 });
    expect(r).toMatchObject({ ok: true, status: 200, error: null });
    expect(r.responseBodyStart).toBe('x'.repeat(4096));
    // The receiver sees the connection go away; a client still reading would keep it open forever.
    const outcome = await Promise.race([
      endlessClosed.then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('still streaming'), 5000)),
    ]);
    expect(outcome).toBe('closed');
  });

  it('does not split a UTF-8 character at the cap', async () => {
    const r = await postWebhook({ url: `${base}/utf8`, body, maxResponseBytes: 5 });
    expect(r.responseBodyStart).toBe('éé');
  });

  it('reports a closed port as connection_refused', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await postWebhook({ url: `http://127.0.0.1:${closedPort}/`, body })).toMatchObject({
      ok: false,
      status: null,
      error: 'connection_refused',
    });
  });

  it('refuses forbidden addresses before sending, by name and by IP literal', async () => {
    const before = received.length;
    const guard = guardedLookup(false);
    expect(await postWebhook({ url: `http://localhost:${port}/ok`, body, lookup: guard })).toMatchObject({
      ok: false,
      error: 'forbidden_address',
    });
    expect(await postWebhook({ url: `${base}/ok`, body, lookup: guard })).toMatchObject({ ok: false, error: 'forbidden_address' });
    expect(await postWebhook({ url: `http://[::ffff:127.0.0.1]:${port}/ok`, body, lookup: guard })).toMatchObject({
      ok: false,
      error: 'forbidden_address',
    });
    expect(received.length).toBe(before);
  });

  it('never throws on bad input', async () => {
    expect(await postWebhook({ url: 'not a url', body })).toMatchObject({ ok: false, error: 'invalid_url' });
    expect(await postWebhook({ url: 'ftp://example.com/', body })).toMatchObject({ ok: false, error: 'invalid_url' });
    expect(await postWebhook({ url: `${base}/ok`, body, headers: { 'X-Bad': 'a\nb' } })).toMatchObject({
      ok: false,
      error: 'invalid_request',
    });
  });

  it('reuses pooled connections across attempts to the same origin', async () => {
    const agents = createWebhookAgents();
    try {
      const before = connections;
      for (let i = 0; i < 10; i++) {
        expect(await postWebhook({ url: `${base}/ok`, body, agents, lookup: allowPrivate })).toMatchObject({ ok: true });
      }
      // undici may open a second connection while the first is being handed back to the pool; never one per attempt.
      expect(connections - before).toBeLessThanOrEqual(2);
    } finally {
      agents.destroy();
    }
  });
});

describe('postWebhook over https', () => {
  let tlsServer: ReturnType<typeof createHttpsServer>;
  let tlsPort: number;
  beforeAll(async () => {
    tlsServer = createHttpsServer({ cert: TEST_CERT, key: TEST_KEY }, (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(202).end('accepted'));
    });
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    tlsPort = (tlsServer.address() as AddressInfo).port;
  });
  afterAll(async () => {
    tlsServer.closeAllConnections();
    await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
  });

  it('delivers through the guarded lookup to a receiver whose certificate is trusted', async () => {
    const agents = createWebhookAgents({ ca: TEST_CERT });
    try {
      const r = await postWebhook({ url: `https://localhost:${tlsPort}/hook`, body, agents, lookup: allowPrivate });
      expect(r).toMatchObject({ ok: true, status: 202, error: null, responseBodyStart: 'accepted' });
    } finally {
      agents.destroy();
    }
  });

  it('reports an untrusted certificate as tls_error', async () => {
    const agents = createWebhookAgents();
    try {
      const r = await postWebhook({ url: `https://localhost:${tlsPort}/hook`, body, agents, lookup: allowPrivate });
      expect(r).toMatchObject({ ok: false, status: null, error: 'tls_error' });
    } finally {
      agents.destroy();
    }
  });

  it('refuses the https receiver on a loopback name without the development setting', async () => {
    const agents = createWebhookAgents({ ca: TEST_CERT });
    try {
      const r = await postWebhook({ url: `https://localhost:${tlsPort}/hook`, body, agents, lookup: guardedLookup(false) });
      expect(r).toMatchObject({ ok: false, error: 'forbidden_address' });
    } finally {
      agents.destroy();
    }
  });
});

describe('postWebhook on a pooled connection the receiver dropped', () => {
  it('goes once more on a fresh connection when a reused socket is reset before any answer', async () => {
    // A receiver that answers the first request on each connection and drops the connection on
    // the second one without a word, as a server closing an idle keep-alive socket does.
    const sockets: Socket[] = [];
    let answered = 0;
    const tcp = createTcpServer((socket) => {
      sockets.push(socket);
      let requests = 0;
      let buffered = '';
      socket.on('data', (chunk) => {
        buffered += chunk.toString('latin1');
        // Each request here is headers plus the fixed-size body.
        while (buffered.includes('\r\n\r\n') && buffered.length >= buffered.indexOf('\r\n\r\n') + 4 + body.length) {
          buffered = buffered.slice(buffered.indexOf('\r\n\r\n') + 4 + body.length);
          requests++;
          if (requests === 1) {
            answered++;
            socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
          } else {
            socket.destroy();
          }
        }
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(tcp.address() as AddressInfo).port}/hook`;
    const agents = createWebhookAgents();
    try {
      expect(await postWebhook({ url, body, agents })).toMatchObject({ ok: true, status: 200 });
      expect(await postWebhook({ url, body, agents })).toMatchObject({ ok: true, status: 200, responseBodyStart: 'ok' });
      expect(sockets).toHaveLength(2);
      expect(answered).toBe(2);
    } finally {
      agents.destroy();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    }
  });

  it('does not retry when there is no pool: the reset is the outcome', async () => {
    const tcp = createTcpServer((socket) => {
      socket.once('data', () => socket.destroy());
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(tcp.address() as AddressInfo).port}/hook`;
    try {
      expect(await postWebhook({ url, body })).toMatchObject({ ok: false, status: null, error: 'connection_reset' });
    } finally {
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    }
  });
});
