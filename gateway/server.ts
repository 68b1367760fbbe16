/**
 * The gateway: one TCP listener per protocol. It owns the sockets; protocol
 * modules stay pure. Stopping drains every connection (the frame in hand is
 * stored and acknowledged) before the listeners close. New connections pass
 * the caps of connection-limits.ts before any work is done for them.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { Clock } from '../core/clock.js';
import type { EventStore } from '../core/event-store/port.js';
import { randomUuid } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { GatewayCommands } from './commands/dispatcher.js';
import { DeviceConnection } from './connection.js';
import { ConnectionAdmission, readFileLimit, totalConnectionCap, type FileLimit } from './connection-limits.js';
import { DeviceDirectory } from './directory.js';
import type { ProtocolModule, ProtocolName } from './protocol.js';
import { LogFollower } from './log-follower.js';
import { LogThrottle } from './log-throttle.js';
import { newStats, type ConnectionRejection, type GatewayCounters } from './stats.js';
import { KeyedThrottle } from './keyed-throttle.js';
import { DevicePresence } from './presence.js';
import { RefusedLoginLog } from './refused-logins.js';
import { TokenBucket } from '../core/token-bucket.js';
import { UnknownDeviceLog } from './unknown-devices.js';

export interface GatewayOptions {
  store: EventStore;
  clock: Clock;
  log: Logger;
  host: string;
  listeners: Array<{ protocol: ProtocolModule; port: number }>;
  offlineAfterS: number;
  /** Deadline from accept to login; traffic does not extend it. */
  loginTimeoutS: number;
  /** Open connections per listener. */
  maxConnections: number;
  /** Open connections over all listeners; null or absent: derived from the open-file limit. */
  maxTotalConnections?: number | null;
  maxConnectionsPerAddress: number;
  maxQueuedFrames: number;
  /** A device reconnecting within this long after a close writes no disconnected/connected pair (default 5 s). */
  reconnectGraceMs?: number;
  /** The shared budget of connection events (default CONNECTION_EVENT_BURST, CONNECTION_EVENT_PER_SECOND). */
  connectionEventBudget?: { burst: number; perSecond: number };
  /** The process's open-file limit; read from the system when absent. */
  fileLimit?: FileLimit;
  /** This node's id among the gateway nodes on one store; random when absent (each start is a new node). */
  nodeId?: string;
  /** The first wait for a unit's answer to a command (JT/T 808 grows it per retransmission); default 30 s. */
  commandReplyTimeoutMs?: number;
}

/** At most one log line per cap (and per listener error) in this interval; the next says how many were skipped. */
const CAP_LOG_INTERVAL_MS = 10_000;
/** At most one refusal line of each kind per remote address in this interval (connection.ts). */
const REFUSAL_LOG_INTERVAL_MS = 10_000;
/** A JT/T 808 terminal gets at most one auth code a minute from a node; a registration sooner gets 0x8100 result 3. */
export const REGISTRATION_INTERVAL_MS = 60_000;
/**
 * Events about refused devices and replaced connections (`UnknownDeviceSeen`,
 * `DeviceLoginRefused`, `DeviceConnectionReplaced`): at most one per identifier per minute,
 * and all identifiers together within a bucket of 50 refilled at one a second (at most
 * 50 + 3,600 an hour, whatever a scan does). docs/gateway-policies.md.
 */
export const DEVICE_EVENT_INTERVAL_MS = 60_000;
export const DEVICE_EVENT_BURST = 50;
export const DEVICE_EVENT_PER_SECOND = 1;
/**
 * DeviceConnected/DeviceDisconnected of all devices together: a burst of 1,000, then 100 a
 * second; beyond that writes wait (each device's latest state only). A quick redial within
 * the grace period writes nothing at all. docs/gateway-policies.md.
 */
export const CONNECTION_EVENT_BURST = 1_000;
export const CONNECTION_EVENT_PER_SECOND = 100;
export const DEFAULT_RECONNECT_GRACE_MS = 5_000;
export const DEFAULT_COMMAND_REPLY_TIMEOUT_MS = 30_000;

export class Gateway {
  readonly stats: GatewayCounters = newStats();
  /** Written into this node's `DeviceConnected` events, so other nodes on the store tell them from their own. */
  readonly nodeId: string;
  /** The other nodes' logins, and device commands queued or ended anywhere, from the shared log. */
  private readonly follower: LogFollower;
  private readonly servers: Array<{ protocol: ProtocolName; server: Server }> = [];
  private readonly connections = new Set<DeviceConnection>();
  private readonly presence: DevicePresence;
  private readonly commands: GatewayCommands;
  private readonly directory: DeviceDirectory;
  private readonly unknownDevices: UnknownDeviceLog;
  private readonly refusedLogins: RefusedLoginLog;
  private readonly admission: ConnectionAdmission;
  private readonly capLog = new LogThrottle(CAP_LOG_INTERVAL_MS);
  private readonly refusalLog = new LogThrottle(REFUSAL_LOG_INTERVAL_MS);
  private readonly registrations = new LogThrottle(REGISTRATION_INTERVAL_MS);

  constructor(private readonly options: GatewayOptions) {
    this.nodeId = options.nodeId ?? randomUuid();
    this.directory = new DeviceDirectory(options.store, options.clock);
    const deviceEvents = new KeyedThrottle(DEVICE_EVENT_INTERVAL_MS, new TokenBucket(DEVICE_EVENT_BURST, DEVICE_EVENT_PER_SECOND));
    this.unknownDevices = new UnknownDeviceLog(options.store, options.clock, options.log, deviceEvents, this.stats);
    this.refusedLogins = new RefusedLoginLog(options.store, options.clock, options.log, deviceEvents, this.stats);
    this.presence = new DevicePresence({
      store: options.store,
      clock: options.clock,
      log: options.log,
      stats: this.stats,
      bucket: new TokenBucket(
        options.connectionEventBudget?.burst ?? CONNECTION_EVENT_BURST,
        options.connectionEventBudget?.perSecond ?? CONNECTION_EVENT_PER_SECOND,
      ),
      replacements: deviceEvents,
      graceMs: options.reconnectGraceMs ?? DEFAULT_RECONNECT_GRACE_MS,
      nodeId: this.nodeId,
    });
    this.follower = new LogFollower({ store: options.store, clock: options.clock, log: options.log });
    // A device that logged in on another node is online there: this node lets go of it (presence.ts).
    this.follower.on('DeviceConnected', (e) => this.presence.connectedInLog(e));
    this.commands = new GatewayCommands({
      store: options.store,
      clock: options.clock,
      log: options.log,
      replyTimeoutMs: options.commandReplyTimeoutMs ?? DEFAULT_COMMAND_REPLY_TIMEOUT_MS,
    });
    this.commands.follow(this.follower);
    const fileLimit = options.fileLimit ?? readFileLimit();
    this.admission = new ConnectionAdmission(
      totalConnectionCap(fileLimit, options.maxTotalConnections ?? null),
      options.maxConnectionsPerAddress,
    );
    options.log.info(
      {
        gatewayNode: this.nodeId,
        fileLimit: fileLimit.soft,
        fileLimitSource: fileLimit.source,
        maxTotalConnections: this.admission.maxTotal,
        maxConnectionsPerListener: options.maxConnections,
        maxConnectionsPerAddress: this.admission.maxPerAddress,
      },
      'gateway node and its connection caps',
    );
  }

  /** Starts every listener; resolves with the ports actually bound (0 picks a free one). */
  async start(): Promise<Record<ProtocolName, number>> {
    this.follower.start();
    try {
      return await this.listen();
    } catch (err) {
      await this.follower.stop();
      throw err;
    }
  }

  private async listen(): Promise<Record<ProtocolName, number>> {
    const ports = {} as Record<ProtocolName, number>;
    for (const { protocol, port } of this.options.listeners) {
      const server = createServer({ noDelay: true }, (socket) => this.accept(socket, protocol));
      server.maxConnections = this.options.maxConnections;
      server.on('drop', (info) => this.rejected('listener_cap', protocol.name, info?.remoteAddress ?? '?'));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, this.options.host, () => {
          server.off('error', reject);
          // After listen, errors are failed accepts (EMFILE, ENFILE): libuv sheds the connection; we count and log.
          server.on('error', (err) => this.acceptFailed(protocol.name, err));
          resolve();
        });
      });
      const address = server.address();
      ports[protocol.name] = typeof address === 'object' && address ? address.port : port;
      this.servers.push({ protocol: protocol.name, server });
    }
    return ports;
  }

  private accept(socket: Socket, protocol: ProtocolModule): void {
    const address = socket.remoteAddress ?? '?';
    const rejection = this.admission.admit(address, this.options.clock.now());
    if (rejection) {
      socket.destroy();
      this.rejected(rejection, protocol.name, address);
      return;
    }
    this.stats.connections += 1;
    const connection = new DeviceConnection(socket, protocol, {
      store: this.options.store,
      clock: this.options.clock,
      log: this.options.log,
      directory: this.directory,
      unknownDevices: this.unknownDevices,
      refusedLogins: this.refusedLogins,
      stats: this.stats,
      refusalLog: this.refusalLog,
      registrations: this.registrations,
      offlineAfterMs: this.options.offlineAfterS * 1000,
      loginTimeoutMs: this.options.loginTimeoutS * 1000,
      maxQueuedFrames: this.options.maxQueuedFrames,
      // A unit that redials while its old socket lingers: the newest connection wins (presence.ts).
      onBound: (c) => {
        this.presence.connected(c);
        this.commands.attach(c);
      },
      onDecoded: (c, decoded) => this.commands.sessionOf(c)?.observe(decoded),
      onClosed: (c, disconnect) => {
        this.admission.release(address);
        if (c.deviceId) this.commands.detach(c);
        this.connections.delete(c);
        if (disconnect) this.presence.closed(c, disconnect.reason, disconnect.lastSeenAt);
      },
    });
    this.connections.add(connection);
  }

  /** Counted, and logged at most once per cap per interval with how many were not logged. */
  private rejected(reason: ConnectionRejection, protocol: ProtocolName, remote: string): void {
    this.stats.connectionsRejected[reason] += 1;
    const skipped = this.capLog.take(reason, this.options.clock.now());
    if (skipped < 0) return;
    this.options.log.warn(
      {
        reason,
        protocol,
        remote,
        rejectedSinceLastLine: skipped,
        open: this.connections.size,
        maxTotal: this.admission.maxTotal,
        maxPerAddress: this.admission.maxPerAddress,
        maxPerListener: this.options.maxConnections,
      },
      'connection cap reached; new connection closed',
    );
  }

  private acceptFailed(protocol: ProtocolName, err: Error): void {
    this.stats.acceptErrors += 1;
    const skipped = this.capLog.take('accept_error', this.options.clock.now());
    if (skipped >= 0) this.options.log.error({ err, protocol, failedSinceLastLine: skipped }, 'accept failed');
  }

  get openConnections(): number {
    return this.connections.size;
  }

  /** Stops accepting, lets every connection finish the frame in hand, then closes them. */
  async stop(): Promise<void> {
    await this.follower.stop();
    const closing = this.servers.map(
      ({ server }) => new Promise<void>((resolve) => server.close(() => resolve())),
    );
    await Promise.all([...this.connections].map((c) => c.shutdown()));
    // Every device of this node is offline now, as far as it knows: no grace, no bucket.
    await this.presence.flushAll();
    await Promise.all(closing);
  }
}
