/** A minimal device-side TCP client for gateway tests: send bytes, await replies, see the close. */
import { Socket, connect } from 'node:net';

export class TcpClient {
  private buffer: Buffer = Buffer.alloc(0);
  private notify: (() => void) | null = null;
  closed = false;
  readonly closedPromise: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.notify?.();
    });
    this.closedPromise = new Promise((resolve) =>
      socket.on('close', () => {
        this.closed = true;
        this.notify?.();
        resolve();
      }),
    );
    socket.on('error', () => {});
  }

  /** `localAddress` picks the client's own address (any of 127.0.0.0/8 on Linux), to look like another remote. */
  static async open(port: number, host = '127.0.0.1', localAddress?: string): Promise<TcpClient> {
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect({ port, host, noDelay: true, ...(localAddress ? { localAddress } : {}) }, () => resolve(s));
      s.once('error', reject);
    });
    return new TcpClient(socket);
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Waits until `take` finds something in the received bytes; rejects after `timeoutMs` or on close. */
  async receive<T>(take: (buf: Buffer) => { value: T; consumed: number } | null, timeoutMs = 3000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = take(this.buffer);
      if (got) {
        this.buffer = this.buffer.subarray(got.consumed);
        return got.value;
      }
      if (this.closed) throw new Error('connection closed before the expected reply');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no reply within ${timeoutMs} ms (have ${this.buffer.toString('hex')})`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.notify = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.notify = null;
    }
  }

  /** Bytes received and not yet taken. */
  get unread(): Buffer {
    return this.buffer;
  }

  /** Resolves true if nothing arrives within `ms`. */
  async silentFor(ms: number): Promise<boolean> {
    const before = this.buffer.length;
    await new Promise((r) => setTimeout(r, ms));
    return this.buffer.length === before;
  }

  close(): void {
    this.socket.destroy();
  }
}
