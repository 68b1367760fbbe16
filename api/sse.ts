/**
 * One server-sent events response on a raw Node response: framing, keep-alive
 * comments, backpressure and close. It knows nothing of fleets; the stream
 * route decides what to send.
 */
import type { ServerResponse } from 'node:http';

/** A client this far behind (bytes queued in the socket) is cut off; it resumes with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

export class SseConnection {
  private keepAlive: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly closeListeners: Array<() => void> = [];
  private readonly keepAliveListeners: Array<() => void> = [];

  constructor(
    private readonly res: ServerResponse,
    keepAliveMs: number,
    headers: Record<string, string | number | string[] | undefined>,
  ) {
    res.writeHead(200, {
      ...headers,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      // Proxies such as nginx would otherwise buffer the stream.
      'X-Accel-Buffering': 'no',
    });
    // `retry` tells EventSource how long to wait before reconnecting; the comment flushes the headers.
    res.write('retry: 2000\n: connected\n\n');
    this.keepAlive = setInterval(() => {
      for (const l of this.keepAliveListeners) l();
      this.write(': keep-alive\n\n');
    }, keepAliveMs);
    res.on('close', () => this.close());
    // A client gone before the stream started: Node has sent its close already and will not again.
    if (res.destroyed) this.close();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Writes one event; false when the connection is closed (or was just closed for falling behind). */
  send(event: string, id: string, data: unknown): boolean {
    return this.write(`event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Resolves once the socket buffer has drained (or the connection closed): replay writes wait on it. */
  drained(): Promise<void> {
    if (this.closed || !this.res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  /** Runs `listener` before each keep-alive comment: the periodic moment to look at the clock. */
  onKeepAlive(listener: () => void): void {
    this.keepAliveListeners.push(listener);
  }

  /** Ends the response; `reason` (one line) goes out first as a comment, for whoever reads the raw stream. */
  close(reason?: string): void {
    if (this.closed) return;
    this.closed = true;
    if (this.keepAlive) clearInterval(this.keepAlive);
    if (!this.res.writableEnded) this.res.end(reason ? `: ${reason}\n\n` : undefined);
    for (const l of this.closeListeners.splice(0)) l();
  }

  private write(chunk: string): boolean {
    if (this.closed) return false;
    this.res.write(chunk);
    if (this.res.writableLength > MAX_BUFFERED_BYTES) {
      this.close();
      return false;
    }
    return true;
  }
}
