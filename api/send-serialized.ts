import type { FastifyReply } from 'fastify';

/**
 * Sends a body that is already JSON (built from items serialised with the
 * route's own schema). Fastify passes a string or bytes with a JSON content
 * type through without serialising it again.
 */
export function sendSerialized(reply: FastifyReply, json: string | Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

/**
 * List bodies are assembled in reusable buffers: allocating a fresh 10 kB-1 MB buffer
 * for every response (and collecting it) cost more than building the body. A buffer
 * returns to the pool only on the response's 'finish', once its bytes have been handed
 * to the kernel; the buffer of an aborted response is left to the garbage collector, so
 * a buffer still being written is never reused.
 */
class BodyBufferPool {
  private readonly free = new Map<number, Buffer[]>();
  private pooledBytes = 0;

  constructor(
    private readonly smallest: number,
    private readonly largest: number,
    private readonly maxPooledBytes: number,
  ) {}

  /** A buffer of at least `size` bytes, and whether it may be given back. */
  take(size: number): { buffer: Buffer; pooled: boolean } {
    if (size > this.largest) return { buffer: Buffer.allocUnsafe(size), pooled: false };
    let capacity = this.smallest;
    while (capacity < size) capacity *= 2;
    const buffer = this.free.get(capacity)?.pop();
    if (buffer) {
      this.pooledBytes -= capacity;
      return { buffer, pooled: true };
    }
    return { buffer: Buffer.allocUnsafeSlow(capacity), pooled: true };
  }

  give(buffer: Buffer): void {
    if (this.pooledBytes + buffer.length > this.maxPooledBytes) return;
    let list = this.free.get(buffer.length);
    if (!list) this.free.set(buffer.length, (list = []));
    list.push(buffer);
    this.pooledBytes += buffer.length;
  }
}

const pool = new BodyBufferPool(16 * 1024, 1024 * 1024, 16 * 1024 * 1024);
const HEAD = Buffer.from('{"data":[');
const COMMA = 0x2c;

/** Sends `{"data":[items...],"pagination":{...}}` from serialised items (or runs of them already joined by commas), copied once into a pooled buffer. */
export function sendList(
  reply: FastifyReply,
  items: readonly Buffer[],
  pagination: { next_cursor: string | null; has_more: boolean },
): FastifyReply {
  const tail = `],"pagination":${JSON.stringify(pagination)}}`;
  let size = HEAD.length + Buffer.byteLength(tail) + Math.max(0, items.length - 1);
  for (const item of items) size += item.length;
  const { buffer, pooled } = pool.take(size);
  // TypedArray#set: a plain memory copy, without Buffer#copy's argument checks per item.
  buffer.set(HEAD, 0);
  let at = HEAD.length;
  for (let i = 0; i < items.length; i++) {
    if (i > 0) buffer[at++] = COMMA;
    const item = items[i]!;
    buffer.set(item, at);
    at += item.length;
  }
  at += buffer.write(tail, at);
  if (pooled) reply.raw.once('finish', () => pool.give(buffer));
  return sendSerialized(reply, buffer.subarray(0, at));
}
