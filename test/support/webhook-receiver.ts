/**
 * A real local HTTP receiver for webhook tests: records every request with
 * its raw body, answers what the test says (200 by default), and verifies
 * signatures the way the README tells integrators to.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '../../webhook-delivery/signature.js';
import { until } from './device-login.js';

export interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  /** Wall-clock ms when it arrived. */
  at: number;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  received: Received[];
  /** How to answer the next requests: a status, or a function of the request (null: never answer). */
  respond(answer: number | ((r: Received, res: ServerResponse) => number | null)): void;
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  /** Stops listening (connections refused from now on); `reopen` listens on the same port again. */
  close(): Promise<void>;
  reopen(): Promise<void>;
}

export function signatureValid(r: Received, secret: string, header = 'x-service-signature'): boolean {
  return verifyWebhook({ secret, header: r.headers[header] as string | undefined, timestamp: r.headers['x-service-timestamp'] as string | undefined, body: r.raw });
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const received: Received[] = [];
  let answer: number | ((r: Received, res: ServerResponse) => number | null) = 200;
  let server: Server;
  const open = (p: number) =>
    new Promise<number>((resolve) => {
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const r: Received = { headers: req.headers, raw, json: raw ? JSON.parse(raw) : null, at: Date.now() };
          received.push(r);
          const status = typeof answer === 'number' ? answer : answer(r, res);
          if (status !== null && !res.headersSent) res.writeHead(status, { 'content-type': 'text/plain' }).end(`answered ${status}`);
        });
      });
      server.keepAliveTimeout = 1000;
      server.listen(p, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
    });
  const bound = await open(port);
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${bound}/hooks`,
    port: bound,
    received,
    respond(a) {
      answer = a;
    },
    async waitFor(count, timeoutMs = 20_000) {
      await until(() => received.length >= count, timeoutMs, `${count} webhook requests (got ${received.length})`);
      return received;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    async reopen() {
      await open(bound);
    },
  };
  return receiver;
}
