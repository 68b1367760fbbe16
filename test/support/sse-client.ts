/** A minimal server-sent events reader over fetch, for tests against a listening server. */
export interface SseMessage {
  event: string | null;
  id: string | null;
  data: string;
  /** Comment lines (`: keep-alive`) come as messages with only this set. */
  comment: string | null;
}

export interface SseClient {
  status: number;
  headers: Headers;
  /** Waits for the next message matching `accept` (others are skipped); rejects after `timeoutMs`. */
  next(accept?: (m: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage>;
  /** Resolves when the server ends the stream. */
  ended(timeoutMs?: number): Promise<void>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string>): Promise<SseClient> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const queue: SseMessage[] = [];
  let buffer = '';
  let done = false;

  async function fill(deadline: number): Promise<boolean> {
    if (done) return false;
    const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now())));
    const chunk = await Promise.race([reader.read(), timer]);
    if (chunk === 'timeout') throw new Error('timed out waiting for a server-sent event');
    if (chunk.done) {
      done = true;
      return false;
    }
    buffer += chunk.value;
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const m: SseMessage = { event: null, id: null, data: '', comment: null };
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) m.comment = line.slice(1).trim();
        else if (line.startsWith('event: ')) m.event = line.slice(7);
        else if (line.startsWith('id: ')) m.id = line.slice(4);
        else if (line.startsWith('data: ')) m.data += line.slice(6);
      }
      queue.push(m);
    }
    return true;
  }

  return {
    status: res.status,
    headers: res.headers,
    async next(accept = (m) => m.event !== null, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const i = queue.findIndex(accept);
        if (i >= 0) return queue.splice(0, i + 1).pop()!;
        queue.length = 0;
        if (!(await fill(deadline))) throw new Error('the stream ended');
      }
    },
    async ended(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (await fill(deadline)) queue.length = 0;
    },
    close() {
      abort.abort();
    },
  };
}
