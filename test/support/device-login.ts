/** A device's side of a TCP session in tests: log in as a real unit does, send points, read the acks. */
import type { EncodeContext, ProtocolEncoder, SimPoint } from '../simulator/encoders/types.js';
import { runLogin } from '../simulator/login.js';
import type { TcpClient } from './tcp-client.js';

/** `receive` taker for the encoder's replies. */
export function replyOf(encoder: ProtocolEncoder) {
  return (buf: Buffer) => {
    const t = encoder.takeReply(buf);
    return t ? { value: t.reply, consumed: t.consumed } : null;
  };
}

/**
 * Runs the encoder's login (JT/T 808: register unless `ctx.authCode` is set, then
 * authenticate); throws when a step is not acknowledged. Resolves with the auth code the
 * unit holds afterwards (JT/T 808), for its next connection.
 */
export async function login(client: TcpClient, encoder: ProtocolEncoder, ctx: EncodeContext): Promise<string | undefined> {
  const outcome = await runLogin(encoder, ctx, async (frame) => {
    client.send(frame);
    return client.receive(replyOf(encoder));
  });
  if (!outcome.ok) throw new Error(`login step refused: ${outcome.reply?.toString('hex') ?? 'no reply'}`);
  return outcome.authCode;
}

/** Sends one frame of `points` and resolves with the reply (check it with `encoder.isAck`). */
export async function sendPoints(client: TcpClient, encoder: ProtocolEncoder, ctx: EncodeContext, points: SimPoint[]): Promise<{ frame: Buffer; reply: Buffer }> {
  const frame = encoder.encode(points, ctx);
  client.send(frame);
  return { frame, reply: await client.receive(replyOf(encoder)) };
}

/** Polls `check` until it holds; throws after `timeoutMs` (generous: tests run on a loaded machine). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition', everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
