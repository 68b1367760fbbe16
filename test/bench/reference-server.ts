/**
 * The ingest benchmark's yardsticks: a TCP server that frames and decodes with
 * the same protocol modules as the gateway and answers each frame at once,
 * storing nothing and checking no device registry. The gap between it and the
 * gateway is what durability (the store append before the ack) costs.
 *
 * Given a file, it is the durable reference instead: each frame's bytes are
 * appended to the file, and its ack leaves once an fdatasync has covered them
 * (frames that arrive while one runs share the next). No server that acks only
 * what is on disk can ack sooner on this disk; the gap between it and the
 * gateway is what the platform adds beyond the disk itself.
 */
import { fdatasync, openSync, writev } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { ProtocolModule, ProtocolName, SessionInfo } from '../../gateway/protocol.js';
import { protocols } from '../../gateway/protocols/index.js';

/** Acks leave once an fdatasync covered their frames; frames that arrive while one runs share one write and one sync after it. */
class GroupCommit {
  private frames: Buffer[] = [];
  private acks: Array<{ socket: Socket; reply: Buffer }> = [];
  private syncing = false;

  constructor(private readonly fd: number) {}

  add(frame: Buffer, socket: Socket, reply: Buffer | null): void {
    this.frames.push(frame);
    if (reply) this.acks.push({ socket, reply });
    if (!this.syncing) this.commit();
  }

  private commit(): void {
    const frames = this.frames;
    const acks = this.acks;
    this.frames = [];
    this.acks = [];
    this.syncing = true;
    writev(this.fd, frames, (writeErr) => {
      if (writeErr) throw writeErr;
      fdatasync(this.fd, (syncErr) => {
        if (syncErr) throw syncErr;
        for (const { socket, reply } of acks) if (!socket.destroyed) socket.write(reply);
        this.syncing = false;
        if (this.frames.length > 0) this.commit();
      });
    });
  }
}

function serve(socket: Socket, protocol: ProtocolModule, log: GroupCommit | null): void {
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
        if (log) log.add(frame, socket, decoded.reply);
        else if (decoded.reply) socket.write(decoded.reply);
      } catch {
        // A refused frame gets no ack, as in the gateway.
      } finally {
        session.frameIndex += 1;
      }
    }
    if (split.fatal) socket.destroy();
  });
}

/** Listens on a free port per protocol; resolves with the ports. `logFile`: the durable reference, appending there. */
export async function startReferenceServer(logFile?: string): Promise<Record<ProtocolName, number>> {
  const ports = {} as Record<ProtocolName, number>;
  const log = logFile === undefined ? null : new GroupCommit(openSync(logFile, 'a'));
  for (const protocol of Object.values(protocols)) {
    const server: Server = createServer({ noDelay: true }, (socket) => serve(socket, protocol, log));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    ports[protocol.name] = typeof address === 'object' && address ? address.port : 0;
  }
  return ports;
}
