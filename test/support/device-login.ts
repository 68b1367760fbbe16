/** A device's side of a TCP session in tests: log in as a real unit does, send points, read the acks. */
import type { EncodeContext, ProtocolEncoder, SimPoint } from '../simulator/encoders/types.js';
import type { TcpClient } from './tcp-client.js';

/** `receive` taker for the encoder's replies. */
export function replyOf(encoder: ProtocolEncoder) {
  return (buf: Buffer) => {
    const t = encoder.takeReply(buf);
    return t ? { value: t.reply, consumed: t.consumed } : null;
  };
}

/** Runs the encoder's login; throws when a step is not acknowledged. */
export async function login(client: TcpClient, encoder: ProtocolEncoder, ctx: EncodeContext): Promise<void> {
  for (const frame of encoder.handshake(ctx)) {
    client.send(frame);
    const reply = await client.receive(replyOf(encoder));
    if (!encoder.isAck(reply, frame, 0)) throw new Error(`login step refused: ${reply.toString('hex')}`);
  }
}

/** Sends one frame of `points` and resolves with the reply (check it with `encoder.isAck`). */
export async function sendPoints(client: TcpClient, encoder: ProtocolEncoder, ctx: EncodeContext, points: SimPoint[]): Promise<{ frame: Buffer; reply: Buffer }> {
  const frame = encoder.encode(points, ctx);
  client.send(frame);
  return { frame, reply: await client.receive(replyOf(encoder)) };
}

/** Polls `check` until it holds; throws after `timeoutMs` (generous: tests run on a loaded machine). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
