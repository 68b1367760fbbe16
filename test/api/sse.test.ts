/** An SSE response whose client is already gone when the stream starts closes at once (Node sends no second `close`). */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { SseConnection } from '../../api/sse.js';

describe('SseConnection', () => {
  it('is closed, and runs its close listeners, when its response was destroyed before it started', () => {
    const res = new ServerResponse(new IncomingMessage(new Socket()));
    res.destroy();
    const conn = new SseConnection(res, 60_000, {});
    let closed = 0;
    conn.onClose(() => closed++);
    expect(conn.isClosed).toBe(true);
    expect(closed).toBe(1);
  });
});
