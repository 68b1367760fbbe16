/**
 * One simulated tracker over a real TCP socket: handshake, then frames of
 * route points, each waiting for its ack. A frame without an ack (timeout or
 * lost connection) is resent as the same bytes after a reconnect, as real
 * units do; only acknowledged points count as delivered.
 */
import { Socket, connect } from 'node:net';
import type { EncodeContext, ProtocolEncoder, SimPoint } from './encoders/types.js';
import { runLogin } from './login.js';
import type { PointSource } from './route.js';

export interface DeviceOptions {
  host: string;
  port: number;
  encoder: ProtocolEncoder;
  ctx: Omit<EncodeContext, 'serial'>;
  route: PointSource;
  pointsPerFrame: number;
  ackTimeoutMs: number;
  /** Called with the points of each acknowledged frame and the ack latency. */
  onAck(points: SimPoint[], latencyMs: number): void;
  onRefused?(reason: string): void;
}

export class SimulatedDevice {
  private socket: Socket | null = null;
  private inbox: Buffer = Buffer.alloc(0);
  private waiter: ((reply: Buffer | null) => void) | null = null;
  private serial = 0;
  private stopped = false;
  /** The frame in flight: resent until acknowledged. */
  private unacked: { frame: Buffer; points: SimPoint[] } | null = null;
  /** JT/T 808: the auth code the platform issued; kept across reconnects, as a unit keeps it. */
  private authCode: string | undefined;
  reconnects = 0;

  constructor(private readonly o: DeviceOptions) {}

  private nextSerial(): number {
    this.serial = (this.serial + 1) & 0xffff;
    return this.serial;
  }

  private async connect(): Promise<void> {
    this.inbox = Buffer.alloc(0);
    this.socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect({ host: this.o.host, port: this.o.port, noDelay: true });
      s.once('connect', () => {
        s.off('error', reject);
        resolve(s);
      });
      s.once('error', reject);
    });
    const s = this.socket;
    s.on('data', (chunk: Buffer) => {
      this.inbox = this.inbox.length ? Buffer.concat([this.inbox, chunk]) : chunk;
      this.deliver();
    });
    const gone = () => {
      if (this.socket === s) this.socket = null;
      const w = this.waiter;
      this.waiter = null;
      w?.(null);
    };
    s.on('close', gone);
    s.on('error', gone);
    const ctx = { ...this.o.ctx, serial: this.nextSerial(), ...(this.authCode !== undefined ? { authCode: this.authCode } : {}) };
    const outcome = await runLogin(this.o.encoder, ctx, (frame) => this.exchange(frame));
    this.serial = (this.serial + Math.max(0, outcome.steps.length + (outcome.ok ? 0 : 1) - 1)) & 0xffff;
    if (!outcome.ok) {
      s.destroy();
      // A code the platform no longer takes: register again on the next connection, as units do.
      if (outcome.reply && this.authCode !== undefined) this.authCode = undefined;
      throw new RefusedError(outcome.reply ? `handshake refused: ${outcome.reply.toString('hex')}` : 'connection closed during handshake');
    }
    this.authCode = outcome.authCode;
  }

  private deliver(): void {
    if (!this.waiter) return;
    const taken = this.o.encoder.takeReply(this.inbox);
    if (!taken) return;
    this.inbox = this.inbox.subarray(taken.consumed);
    const w = this.waiter;
    this.waiter = null;
    w(taken.reply);
  }

  /** Sends a frame and waits for one reply; null on timeout or disconnect. */
  private exchange(frame: Buffer): Promise<Buffer | null> {
    const s = this.socket;
    if (!s) return Promise.resolve(null);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        resolve(null);
      }, this.o.ackTimeoutMs);
      this.waiter = (reply) => {
        clearTimeout(timer);
        resolve(reply);
      };
      s.write(frame);
      this.deliver();
    });
  }

  /** Sends one frame of new points (or resends the unacknowledged one); true when acked. */
  async step(): Promise<boolean> {
    if (this.stopped) return false;
    if (!this.socket) {
      try {
        await this.connect();
      } catch (err) {
        if (err instanceof RefusedError) this.o.onRefused?.(err.message);
        this.reconnects += 1;
        return false;
      }
    }
    if (!this.unacked) {
      const count = Math.min(this.o.pointsPerFrame, this.o.route.remaining ?? Infinity);
      if (count === 0) return false;
      const points = Array.from({ length: count }, () => this.o.route.next());
      this.unacked = { frame: this.o.encoder.encode(points, { ...this.o.ctx, serial: this.nextSerial() }), points };
    }
    const { frame, points } = this.unacked;
    const sentAt = performance.now();
    const reply = await this.exchange(frame);
    if (reply && this.o.encoder.isAck(reply, frame, points.length)) {
      this.unacked = null;
      this.o.onAck(points, performance.now() - sentAt);
      return true;
    }
    // No ack: drop the connection; the same frame goes out again after reconnecting.
    this.socket?.destroy();
    this.socket = null;
    this.reconnects += 1;
    return false;
  }

  stop(): void {
    this.stopped = true;
    this.socket?.end();
    this.socket = null;
  }
}

export class RefusedError extends Error {}
