/**
 * One HTTP request over a real socket from a chosen loopback address
 * (127.0.0.x): tests of per-address limits give each case an address of its own.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export function requestFrom(
  base: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown; from?: string } = {},
): Promise<HttpAnswer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(path, base),
      {
        method,
        localAddress: options.from ?? '127.0.0.1',
        headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let json: unknown = null;
          try {
            json = text === '' ? null : JSON.parse(text);
          } catch {
            // Not JSON (an HTML page): the test reads `text`.
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
