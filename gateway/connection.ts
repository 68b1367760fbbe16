/**
 * One device connection: cuts the byte stream into frames, decodes them in
 * order, stores their records and only then writes the reply the device
 * waits for. Frames are handled one at a time per connection (acks go out in
 * order); many connections append concurrently, which the store groups into
 * one commit.
 */
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Clock } from '../core/clock.js';
import type { DeviceClaim } from '../core/events.js';
import type { EventStore } from '../core/event-store/port.js';
import { appendFailureLevel } from '../core/event-store/write-health.js';
import { randomUuid } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { streams } from '../core/streams.js';
import { DecodeError } from './codec/reader.js';
import { DeviceDirectory, identityLabel } from './directory.js';
import { hexOf } from './hex-sample.js';
import type { LogThrottle } from './log-throttle.js';
import type { Decoded, DeviceIdentity, ProtocolModule, ProtocolName, SessionInfo } from './protocol.js';
import type { GatewayCounters } from './stats.js';
import { recordsToEvents } from './to-events.js';
import type { DisconnectReason } from './presence.js';
import type { RefusedLoginLog } from './refused-logins.js';
import type { UnknownDeviceLog } from './unknown-devices.js';

type CloseReason = 'closed' | 'idle_timeout' | 'login_timeout' | 'protocol_error' | 'shutdown' | 'replaced' | 'refused';

export interface ConnectionDeps {
  store: EventStore;
  clock: Clock;
  log: Logger;
  directory: DeviceDirectory;
  unknownDevices: UnknownDeviceLog;
  refusedLogins: RefusedLoginLog;
  stats: GatewayCounters;
  /** Shared by every connection: refusal log lines at most once per interval per remote address. */
  refusalLog: LogThrottle;
  /** Shared by every connection: at most one JT/T 808 auth code per device per interval. */
  registrations: LogThrottle;
  offlineAfterMs: number;
  /** From accept to login: a hard deadline, not an idle timer (a slow sender must not hold a socket forever). */
  loginTimeoutMs: number;
  maxQueuedFrames: number;
  /** Called once a device is bound (presence.ts records it; an older connection of the device is closed). */
  onBound(connection: DeviceConnection): void;
  /** Every accepted frame of the bound device, as decoded (device commands read fixes and answers from it). */
  onDecoded(connection: DeviceConnection, decoded: Decoded): void;
  /** Called once the socket closed; `disconnect` is null when the connection never was a device's (or was refused). */
  onClosed(connection: DeviceConnection, disconnect: { reason: DisconnectReason; lastSeenAt: number } | null): void;
}

/** Random bytes of a JT/T 808 auth code (sent as hex text: 16 characters). */
const AUTH_CODE_BYTES = 8;

/**
 * Refused inputs in a row (frames that do not decode, runs of junk bytes, frames
 * before login) after which the connection is closed. A real unit gets an
 * occasional frame wrong, then a good one resets the count; eight in a row is a
 * unit talking another protocol, a broken one, or an attacker, and each costs a
 * decode and a reply.
 */
export const MAX_REFUSED_IN_A_ROW = 8;

export class DeviceConnection {
  private pending: Buffer | null = null;
  private readonly queue: Buffer[] = [];
  private pumping = false;
  private paused = false;
  private closing: CloseReason | null = null;
  private device: DeviceClaim | null = null;
  private lastSeenAt: number;
  private readonly session: SessionInfo;
  private readonly log: Logger;
  private drained: Promise<void> = Promise.resolve();
  private resolveDrained: (() => void) | null = null;
  readonly remoteAddress: string;
  /** The remote IP without the port: the key of per-address log limits. */
  private readonly remoteHost: string;
  readonly connectionId = randomUuid();
  /** When the device was bound to this connection. */
  connectedAt = 0;
  private refusedInARow = 0;
  /** JT/T 808: whether the identity of a frame before authentication was looked up (once per connection). */
  private identityChecked = false;
  private refusalLogged = false;
  private loginDeadline: NodeJS.Timeout | null;
  /** JT/T 808: the header form of the latest frame; commands go out in it. */
  protocolVersion: number | null = null;

  constructor(
    private readonly socket: Socket,
    readonly protocol: ProtocolModule,
    private readonly deps: ConnectionDeps,
  ) {
    this.remoteHost = socket.remoteAddress ?? '?';
    this.remoteAddress = `${this.remoteHost}:${socket.remotePort ?? '?'}`;
    this.lastSeenAt = deps.clock.now();
    this.session = { imei: null, model: null, timezoneMinutes: null, frameIndex: 0, now: this.lastSeenAt };
    this.log = deps.log.child({ protocol: protocol.name, remote: this.remoteAddress });
    socket.setNoDelay(true);
    this.loginDeadline = setTimeout(() => this.loginTimedOut(), deps.loginTimeoutMs);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    // The idle timer runs only once the device is bound (the login deadline covers the time before).
    socket.on('timeout', () => this.close('idle_timeout', 'no frame in time'));
    socket.on('error', (err) => this.log.debug({ err }, 'socket error'));
    socket.on('close', () => void this.onSocketClosed());
  }

  private loginTimedOut(): void {
    this.loginDeadline = null;
    if (this.device || this.closing) return;
    this.deps.stats.loginTimeouts += 1;
    this.close('login_timeout', 'no login before the deadline');
  }

  get deviceId(): string | null {
    return this.device?.device_id ?? null;
  }

  /** The device this connection is bound to (presence.ts asks only once it is). */
  get claim(): DeviceClaim {
    if (!this.device) throw new Error('connection not bound to a device');
    return this.device;
  }

  get protocolName(): ProtocolName {
    return this.protocol.name;
  }

  private onData(chunk: Buffer): void {
    if (this.closing) return;
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    const split = this.protocol.splitFrames(buf);
    if (split.skipped > 0) {
      this.deps.stats.bytesSkipped += split.skipped;
      // A run of junk as long as the longest frame counts as one more refused frame.
      const weight = 1 + Math.floor(split.skipped / this.protocol.maxFrameBytes);
      if (this.refused('junk', buf, `${split.skipped} junk bytes skipped between frames`, weight)) return;
    }
    for (const frame of split.frames) this.queue.push(frame);
    const rest = split.consumed < buf.length ? buf.subarray(split.consumed) : null;
    this.pending = rest;
    if (split.fatal) {
      this.logRefusal('unframeable', rest ?? buf, split.fatal, 'unframeable input; closing connection');
      this.count('unframeable');
      this.pending = null;
      this.closeAfterQueue('protocol_error');
    }
    if (this.queue.length >= this.deps.maxQueuedFrames && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
    void this.pump();
  }

  private closeAfterQueue(reason: CloseReason): void {
    this.queue.push(CLOSE_MARK);
    this.pendingCloseReason = reason;
  }

  private pendingCloseReason: CloseReason = 'protocol_error';

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    this.drained = new Promise((resolve) => (this.resolveDrained = resolve));
    try {
      while (this.queue.length > 0 && !this.closing) {
        const frame = this.queue.shift()!;
        if (frame === CLOSE_MARK) {
          this.close(this.pendingCloseReason, 'framing');
          break;
        }
        await this.handleFrame(frame);
        if (this.paused && this.queue.length < this.deps.maxQueuedFrames / 2) {
          this.paused = false;
          this.socket.resume();
        }
      }
    } finally {
      this.pumping = false;
      this.resolveDrained?.();
    }
  }

  private async handleFrame(frame: Buffer): Promise<void> {
    const now = this.deps.clock.now();
    this.session.now = now;
    let decoded: Decoded;
    try {
      decoded = this.protocol.decode(frame, this.session);
    } catch (err) {
      this.deps.stats.framesRefused += 1;
      if (err instanceof DecodeError) {
        if (err.reply) this.write(err.reply);
        this.refused(err.code, frame, err.message);
        return;
      }
      // A bug of ours, not the device's: logged as an error, but still at most once per address per interval.
      this.count('decoder_failure');
      if (this.deps.refusalLog.take(`decoder|${this.remoteHost}`, this.deps.clock.now()) >= 0) {
        this.log.error({ err, device: this.label(), hex: hexOf(frame) }, 'decoder failed; closing connection');
      }
      this.close('protocol_error', 'decoder failure');
      return;
    } finally {
      this.session.frameIndex += 1;
    }
    if (decoded.protocolVersion !== undefined) this.protocolVersion = decoded.protocolVersion;

    // Terminals that authenticate (JT/T 808): login steps, and whatever comes before them, go their own way.
    if (this.protocol.unauthenticatedReply && (decoded.authentication || !this.device)) {
      await this.loginStep(frame, decoded, now);
      return;
    }
    // Most frames repeat the identity the connection is bound to: no await for those.
    if (decoded.identity && !this.isBoundTo(decoded.identity) && !(await this.bind(decoded.identity))) {
      if (decoded.refuse) this.write(decoded.refuse);
      this.close('refused', 'unknown device');
      return;
    }
    if (decoded.announcedTimezoneMinutes !== undefined && this.session.timezoneMinutes === null) {
      this.session.timezoneMinutes = decoded.announcedTimezoneMinutes;
    }
    if (!this.device) {
      this.deps.stats.framesRefused += 1;
      this.count('no_login');
      this.logRefusal('no_login', frame, 'no login frame first', 'frame before the device identified itself; closing');
      this.close('protocol_error', 'no login');
      return;
    }
    this.lastSeenAt = now;
    this.refusedInARow = 0;
    this.deps.stats.framesAccepted += 1;
    this.deps.onDecoded(this, decoded);
    if (decoded.ignoredReason !== undefined && this.log.isLevelEnabled('debug')) {
      this.log.debug({ device: this.label(), reason: decoded.ignoredReason, hex: hexOf(frame) }, 'frame not turned into records');
    }
    if (decoded.records.length === 0) {
      if (decoded.reply) this.write(decoded.reply);
      return;
    }
    const events = recordsToEvents(decoded.records, this.device, this.protocol.name, now);
    // Not awaited here: this frame's decoded records and events need not outlive the call (the
    // store has serialised them), so they die young instead of being copied until the ack.
    return this.ackWhenDurable(this.deps.store.appendToStream(streams.telemetry(this.device.device_id), events), decoded.records.length, decoded.reply);
  }

  /** Acks once the frame's records are durable; if the append fails, no ack: the device keeps the records and resends them. */
  private async ackWhenDurable(appended: Promise<unknown>, records: number, reply: Buffer | null): Promise<void> {
    try {
      await appended;
    } catch (err) {
      this.deps.stats.appendFailures += 1;
      this.log[appendFailureLevel(err, 'error')]({ err, device: this.label() }, 'append failed; closing without ack');
      this.close('protocol_error', 'store unavailable');
      return;
    }
    this.deps.stats.recordsStored += records;
    if (reply) this.write(reply);
  }

  private isBoundTo(identity: DeviceIdentity): boolean {
    return this.device !== null && (identity.imei === this.device.imei || identity.terminalId === this.device.terminal_id);
  }

  /** Binds the connection to a registered device; false when the identity is unknown or changes mid-connection. */
  private async bind(identity: DeviceIdentity): Promise<boolean> {
    if (this.device) {
      const other = await this.deps.directory.resolve(identity);
      if (other?.device_id === this.device.device_id) return true;
      this.count('identity_changed');
      this.logRefusal('identity_changed', null, identityLabel(identity), 'identity changed mid-connection; closing');
      return false;
    }
    const claim = await this.resolveKnown(identity);
    return claim !== null && (await this.bindClaim(claim));
  }

  /** The registered device `identity` names; null (counted, logged, recorded) when there is none. */
  private async resolveKnown(identity: DeviceIdentity): Promise<DeviceClaim | null> {
    const claim = await this.deps.directory.resolve(identity);
    if (claim) return claim;
    this.deps.stats.unknownDeviceFrames += 1;
    this.count('unknown_device');
    this.logRefusal('unknown_device', null, identityLabel(identity), 'unknown device refused');
    await this.deps.unknownDevices.record(identityLabel(identity), this.protocol.name, this.remoteAddress);
    return null;
  }

  /**
   * JT/T 808 login: a registration (0x0100) gets a fresh random auth code, recorded in the
   * device stream; an authentication (0x0102) binds the connection when it presents the
   * latest code, else gets a "failure" general response. Any other frame before that is
   * answered "failure" and not stored.
   */
  private async loginStep(frame: Buffer, decoded: Decoded, now: number): Promise<void> {
    const step = decoded.authentication;
    if (!step && decoded.sessionless && decoded.records.length === 0) {
      if (decoded.reply) this.write(decoded.reply);
      return;
    }
    if (!step) {
      this.deps.stats.framesRefused += 1;
      const reply = this.protocol.unauthenticatedReply!(frame, this.session);
      if (reply) this.write(reply);
      // A terminal nobody registered is told so by its first frame, and recorded as before.
      if (!this.identityChecked && decoded.identity) {
        this.identityChecked = true;
        if (!(await this.resolveKnown(decoded.identity))) {
          this.close('refused', 'unknown device');
          return;
        }
      }
      this.refused('not_authenticated', frame, 'frame before authentication');
      return;
    }
    const claim = decoded.identity ? await this.resolveKnown(decoded.identity) : null;
    if (!claim || (this.device && this.device.device_id !== claim.device_id) || !(await this.protocolAllowed(claim))) {
      if (claim && this.device && this.device.device_id !== claim.device_id) {
        this.count('identity_changed');
        this.logRefusal('identity_changed', null, claim.imei, 'identity changed mid-connection; closing');
      }
      if (decoded.refuse) this.write(decoded.refuse);
      this.close('refused', claim ? 'login refused' : 'unknown device');
      return;
    }
    if (step.step === 'register') {
      // Each code is an event in the device stream: a unit registering again and again gets "already registered".
      if (this.deps.registrations.take(claim.device_id, now) < 0) {
        this.deps.stats.framesRefused += 1;
        this.write(step.alreadyRegistered);
        this.refused('registered_too_often', frame, `${claim.imei} registered less than a minute ago`);
        return;
      }
      const code = randomBytes(AUTH_CODE_BYTES).toString('hex');
      try {
        await this.deps.directory.issueAuthCode(claim, code, now);
      } catch (err) {
        this.deps.stats.appendFailures += 1;
        this.log[appendFailureLevel(err, 'error')]({ err, device: claim.device_id }, 'could not record the auth code; closing without a reply');
        this.close('protocol_error', 'store unavailable');
        return;
      }
      this.refusedInARow = 0;
      this.deps.stats.authCodesIssued += 1;
      this.write(step.accept(code));
      this.log.info({ device: claim.device_id, imei: claim.imei }, 'terminal registered; auth code issued');
      return;
    }
    if (!(await this.deps.directory.authCodeMatches(claim, step.authCode))) {
      this.deps.stats.framesRefused += 1;
      if (decoded.refuse) this.write(decoded.refuse);
      this.refused('auth_failed', frame, `wrong auth code for ${claim.imei}`);
      return;
    }
    if (!this.device && !(await this.bindClaim(claim))) {
      if (decoded.refuse) this.write(decoded.refuse);
      this.close('refused', 'login refused');
      return;
    }
    this.refusedInARow = 0;
    this.deps.stats.framesAccepted += 1;
    if (decoded.reply) this.write(decoded.reply);
  }

  /**
   * A device logs in over one protocol only: the one its registration names, else the one
   * of its first connection (bound now when this is it). Another is refused and recorded.
   */
  private async protocolAllowed(claim: DeviceClaim): Promise<boolean> {
    let bound: ProtocolName;
    try {
      bound = await this.deps.directory.bindProtocol(claim, this.protocol.name, this.deps.clock.now());
    } catch (err) {
      // Unknown until the store answers: refused for now; the unit dials again.
      this.deps.stats.appendFailures += 1;
      this.log[appendFailureLevel(err, 'error')]({ err, device: claim.device_id }, 'could not read or record the protocol binding; login refused');
      return false;
    }
    if (bound === this.protocol.name) return true;
    this.count('protocol_mismatch');
    this.logRefusal('protocol_mismatch', null, `${claim.imei} is bound to ${bound}`, 'login over another protocol refused');
    await this.deps.refusedLogins.protocolMismatch(claim, this.protocol.name, bound, this.remoteAddress);
    return false;
  }

  /** Binds the connection to `claim`: the device is connected from now on. */
  private async bindClaim(claim: DeviceClaim): Promise<boolean> {
    if (!(await this.protocolAllowed(claim))) return false;
    this.device = claim;
    this.session.imei = claim.imei;
    this.session.model = claim.model;
    this.clearLoginDeadline();
    this.socket.setTimeout(this.deps.offlineAfterMs);
    this.connectedAt = this.deps.clock.now();
    this.deps.onBound(this);
    this.log.info({ device: claim.device_id, imei: claim.imei }, 'device connected');
    return true;
  }

  /** Counts refused input by protocol and reason (for /metrics). */
  private count(reason: string): void {
    const byReason = (this.deps.stats.refusals[this.protocol.name] ??= {});
    byReason[reason] = (byReason[reason] ?? 0) + 1;
  }

  /**
   * One refused input: counted, logged (only the connection's first, and at most once per
   * address per interval), and the connection closed once MAX_REFUSED_IN_A_ROW follow each
   * other (`weight`: how many refusals this input counts for). True when the connection is being closed.
   */
  private refused(reason: string, bytes: Buffer, why: string, weight = 1): boolean {
    this.count(reason);
    this.refusedInARow += weight;
    if (!this.refusalLogged) {
      this.refusalLogged = true;
      this.logRefusal(reason, bytes, why, 'input refused');
    }
    if (this.refusedInARow < MAX_REFUSED_IN_A_ROW) return false;
    this.deps.stats.closedForRefusals += 1;
    this.logRefusal(reason, bytes, why, `${MAX_REFUSED_IN_A_ROW} refused inputs in a row; closing`);
    this.close('protocol_error', 'refused inputs in a row');
    return true;
  }

  /** A refusal log line with a sample of the bytes, unless this address had one within the interval. */
  private logRefusal(reason: string, bytes: Buffer | null, why: string, message: string): void {
    const skipped = this.deps.refusalLog.take(`${message}|${this.remoteHost}`, this.deps.clock.now());
    if (skipped < 0) return;
    this.log.warn(
      { device: this.label(), reason, why, ...(bytes ? { hex: hexOf(bytes) } : {}), notLoggedForAddress: skipped },
      message,
    );
  }

  /** Writes to the unit; false when the socket is gone. */
  write(bytes: Buffer): boolean {
    if (this.socket.destroyed) return false;
    this.socket.write(bytes);
    return true;
  }

  /** Ends the connection: pending replies are flushed, then the socket closes. */
  close(reason: CloseReason, why: string): void {
    if (this.closing) return;
    this.closing = reason;
    this.log.debug({ device: this.label(), reason, why }, 'closing connection');
    this.socket.end();
    // Read (and drop) what the peer still sends, so its end of the stream arrives and the socket closes.
    if (this.paused) this.socket.resume();
    // A peer that never reads must not hold the socket open.
    setTimeout(() => this.socket.destroy(), 2_000).unref();
  }

  /** Finishes the frame in hand (its append and ack), then closes. */
  async shutdown(): Promise<void> {
    this.queue.length = 0;
    await this.drained;
    this.close('shutdown', 'server stopping');
    await this.closedPromise;
  }

  private resolveClosed: (() => void) | null = null;
  private readonly closedPromise = new Promise<void>((resolve) => (this.resolveClosed = resolve));

  private clearLoginDeadline(): void {
    if (this.loginDeadline) clearTimeout(this.loginDeadline);
    this.loginDeadline = null;
  }

  private async onSocketClosed(): Promise<void> {
    this.clearLoginDeadline();
    const reason = this.closing ?? 'closed';
    this.closing = reason;
    this.queue.length = 0;
    await this.drained;
    const device = this.device;
    const recorded = device !== null;
    this.deps.onClosed(
      this,
      recorded
        ? {
            reason: reason === 'closed' || reason === 'idle_timeout' || reason === 'shutdown' || reason === 'replaced' ? reason : 'protocol_error',
            lastSeenAt: this.lastSeenAt,
          }
        : null,
    );
    if (recorded) this.log.info({ device: device.device_id, reason }, 'device disconnected');
    this.resolveClosed?.();
  }

  private label(): string {
    return this.device?.imei ?? 'unidentified';
  }
}

/** Queue marker: close once the frames before it are handled. */
const CLOSE_MARK = Buffer.alloc(0);
