/** A device's login dialog over any transport: each frame waits for its reply, as a unit does. */
import type { EncodeContext, LoginStep, ProtocolEncoder } from './encoders/types.js';

export type LoginOutcome =
  /** Logged in; `authCode` is the JT/T 808 code the unit holds now (kept for its next connection). */
  | { ok: true; steps: LoginStep[]; authCode: string | undefined }
  /** A step got no reply (`reply` null) or one that is no ack. */
  | { ok: false; steps: LoginStep[]; frame: Buffer; reply: Buffer | null };

/** Runs `encoder`'s login over `exchange` (send a frame, resolve with its reply or null when none came). */
export async function runLogin(
  encoder: ProtocolEncoder,
  ctx: EncodeContext,
  exchange: (frame: Buffer) => Promise<Buffer | null>,
): Promise<LoginOutcome> {
  const steps: LoginStep[] = [];
  let authCode = ctx.authCode;
  for (let frame = encoder.loginFrame(ctx, steps); frame; frame = encoder.loginFrame(ctx, steps)) {
    const reply = await exchange(frame);
    if (!reply || !encoder.isAck(reply, frame, 0)) return { ok: false, steps, frame, reply };
    steps.push({ frame, reply });
    authCode = encoder.issuedAuthCode(reply) ?? authCode;
  }
  return { ok: true, steps, authCode };
}
