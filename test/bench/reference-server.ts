/**
 * The ingest benchmark's yardstick: a TCP server that frames and decodes with
 * the same protocol modules as the gateway and answers each frame at once,
 * storing nothing and checking no device registry. The gap between it and the
 * gateway is what durability (the store append before the ack) costs.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { ProtocolModule, ProtocolName, SessionInfo } from '../../gateway/protocol.js';
import { protocols } from '../../gateway/protocols/index.js';

function serve(socket: Socket, protocol: ProtocolModule): void {
  socket.setNoDelay(true);
  const session: SessionInfo = { imei: null, model: null, timezoneMinutes: null, frameIndex: 0, now: Date.now() };
  let pending: Buffer | null = null;
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    const buf = pending ? Buffer.concat([pending, chunk]) : chunk;
    const split = protocol.splitFrames(buf);
    pending = split.consumed < buf.length ? Buffer.from(buf.subarray(split.consumed)) : null;
    for (const frame of split.frames) {
      session.now = Date.now();
      try {
        const decoded = protocol.decode(frame, session);
        if (decoded.identity?.imei) session.imei = decoded.identity.imei;
        // A JT/T 808 registration gets the terminal digits as its code (checked by nobody here).
        if (decoded.reply) socket.write(decoded.reply);
      } catch {
        // A refused frame gets no ack, as in the gateway.
      } finally {
        session.frameIndex += 1;
      }
    }
    if (split.fatal) socket.destroy();
  });
}

/** Listens on a free port per protocol; resolves with the ports. */
export async function startReferenceServer(): Promise<Record<ProtocolName, number>> {
  const ports = {} as Record<ProtocolName, number>;
  for (const protocol of Object.values(protocols)) {
    const server: Server = createServer({ noDelay: true }, (socket) => serve(socket, protocol));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    ports[protocol.name] = typeof address === 'object' && address ? address.port : 0;
  }
  return ports;
}
