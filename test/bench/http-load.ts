/**
 * A lean HTTP/1.1 load client for the API benchmark. It exists because a
 * general client (autocannon) parses every response in JavaScript: against a
 * static route answering 27 kB bodies it used a whole core while the server
 * idled half the time, so the "reference" measured the client. This one writes
 * pre-encoded requests on keep-alive sockets, reads only the status line and
 * Content-Length of each response, and counts the body's bytes.
 *
 * Each connection walks its list the way an integrator pages through it: the
 * next request carries the `next_cursor` found in the body's tail (the
 * envelope ends with the pagination object), and a page without one starts the
 * walk again. (A static twin answers every cursor with the same bytes, so the
 * client does the same work against both.)
 */
import { connect, type Socket } from 'node:net';

export interface HttpLoadOptions {
  port: number;
  /** Path and query of the first request of every walk. */
  path: string;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
}

export interface HttpLoadFigure {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  /** Milliseconds, from writing a request to the last byte of its response. */
  p50: number;
  p99: number;
  /** Responses that were not 200, and sockets that failed. */
  errors: number;
  /** CPU seconds this client (its whole process) used during the run. */
  clientCpuSeconds: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');
/** The body's tail kept for the cursor: the pagination object is under 200 bytes. */
const TAIL_BYTES = 512;
const NEXT_CURSOR = /"next_cursor":"([A-Za-z0-9_-]+)"/;

function requestBytes(path: string, headers: Record<string, string>): Buffer {
  const lines = [`GET ${path} HTTP/1.1`, 'host: 127.0.0.1', 'connection: keep-alive', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`);
}

/** The body's length, or CHUNKED for a streamed body (an export) sent in chunks. */
function contentLengthOf(head: string): number {
  const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (m) return Number(m[1]);
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) return CHUNKED;
  throw new Error(`response without content-length: ${head.split('\r\n')[0]}`);
}

const CHUNKED = -2;

/**
 * Where a chunked body stands: reading a size line (`line` holds what came of it),
 * `left` bytes of a chunk and its CRLF, or the CRLF after the last chunk.
 */
interface Chunked {
  line: string;
  left: number;
  last: boolean;
}

/** Consumes what `data` holds of a chunked body; returns the bytes left after the body's end, or null while it goes on. */
function readChunked(c: Chunked, data: Buffer): Buffer | null {
  let at = 0;
  while (at < data.length) {
    if (c.left > 0) {
      const take = Math.min(c.left, data.length - at);
      c.left -= take;
      at += take;
      continue;
    }
    const eol = data.indexOf(10, at);
    if (eol < 0) {
      c.line += data.toString('latin1', at);
      return null;
    }
    const line = (c.line + data.toString('latin1', at, eol)).trim();
    c.line = '';
    at = eol + 1;
    if (c.last && line === '') return data.subarray(at);
    if (line === '') continue; // the CRLF closing a chunk's data
    const size = parseInt(line, 16);
    if (size === 0) c.last = true;
    else c.left = size;
  }
  return null;
}

export function httpLoad(opts: HttpLoadOptions): Promise<HttpLoadFigure> {
  const firstRequest = requestBytes(opts.path, opts.headers);
  const withCursor = `${opts.path}${opts.path.includes('?') ? '&' : '?'}cursor=`;
  const latenciesMs: number[] = [];
  let errors = 0;
  let stopping = false;
  const cpuAtStart = process.cpuUsage();
  const startedAt = performance.now();
  // Every connection reads into this one buffer (see below); its bytes are used before the next read.
  const readBuffer = Buffer.allocUnsafe(256 * 1024);

  const run = (): Promise<void> =>
    new Promise((resolve) => {
      // Reads land in one reused buffer: a fresh 64 kB buffer per read (the default) made the client collect garbage for a third of its time.
      const socket: Socket = connect({
        port: opts.port,
        host: '127.0.0.1',
        noDelay: true,
        onread: {
          buffer: readBuffer,
          callback: (bytes) => {
            onData(readBuffer.subarray(0, bytes));
            return true;
          },
        },
      });
      let sentAt = 0;
      let head: Buffer | null = null; // bytes of a response whose header has not fully arrived
      let bodyLeft = -1; // -1: reading a header
      let status = 0;
      let tail = Buffer.alloc(0);
      let chunked: Chunked | null = null;

      const send = (request: Buffer): void => {
        sentAt = performance.now();
        socket.write(request);
      };
      const nextRequest = (): Buffer => {
        const cursor = NEXT_CURSOR.exec(tail.toString('latin1'));
        return cursor ? requestBytes(withCursor + cursor[1], opts.headers) : firstRequest;
      };
      const finish = (): void => {
        latenciesMs.push(performance.now() - sentAt);
        if (status !== 200) errors++;
        bodyLeft = -1;
        if (stopping) {
          socket.end();
          return;
        }
        send(nextRequest());
      };

      socket.on('connect', () => send(firstRequest));
      const onData = (chunk: Buffer): void => {
        let data = chunk;
        while (data.length > 0) {
          if (bodyLeft < 0 && !chunked) {
            const joined: Buffer = head ? Buffer.concat([head, data]) : data;
            const end = joined.indexOf(HEADER_END);
            if (end < 0) {
              head = Buffer.from(joined); // a copy: the read buffer is overwritten by the next read
              return;
            }
            head = null;
            const text = joined.toString('latin1', 0, end);
            status = Number(text.slice(9, 12));
            bodyLeft = contentLengthOf(text);
            tail = Buffer.alloc(0);
            data = joined.subarray(end + HEADER_END.length);
            chunked = bodyLeft === CHUNKED ? { line: '', left: 0, last: false } : null;
          }
          if (chunked) {
            // A streamed body carries no cursor: the walk starts again.
            const after = readChunked(chunked, data);
            if (after === null) return;
            chunked = null;
            data = after;
            finish();
            continue;
          }
          const take = Math.min(bodyLeft, data.length);
          // Only the body's last TAIL_BYTES can hold the cursor: bytes before them are counted, not kept.
          const keepFrom = Math.max(0, bodyLeft - TAIL_BYTES);
          if (keepFrom < take) tail = Buffer.concat([tail, data.subarray(keepFrom, take)]);
          bodyLeft -= take;
          data = data.subarray(take);
          if (bodyLeft === 0) finish();
        }
      };
      socket.on('error', () => {
        errors++;
        resolve();
      });
      socket.on('close', () => resolve());
    });

  const connections = Array.from({ length: opts.connections }, run);
  const timer = setTimeout(() => (stopping = true), opts.seconds * 1000);
  return Promise.all(connections).then(() => {
    clearTimeout(timer);
    const seconds = (performance.now() - startedAt) / 1000;
    const cpu = process.cpuUsage(cpuAtStart);
    const sorted = Float64Array.from(latenciesMs).sort();
    const at = (q: number): number => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 100) / 100;
    return {
      requests: latenciesMs.length,
      seconds,
      requestsPerSecond: latenciesMs.length / seconds,
      p50: at(0.5),
      p99: at(0.99),
      errors,
      clientCpuSeconds: (cpu.user + cpu.system) / 1e6,
    };
  });
}
