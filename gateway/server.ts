/**
 * The gateway: one TCP listener per protocol. It owns the sockets; protocol
 * modules stay pure. Stopping drains every connection (the frame in hand is
 * stored and acknowledged) before the listeners close.
 */
import { createServer, type Server } from 'node:net';
import type { Clock } from '../core/clock.js';
import type { EventStore } from '../core/event-store/port.js';
import type { Logger } from '../core/logger.js';
import { DeviceConnection } from './connection.js';
import { DeviceDirectory } from './directory.js';
import type { ProtocolModule, ProtocolName } from './protocol.js';
import { newStats, type GatewayStats } from './stats.js';
import { UnknownDeviceLog } from './unknown-devices.js';

export interface GatewayOptions {
  store: EventStore;
  clock: Clock;
  log: Logger;
  host: string;
  listeners: Array<{ protocol: ProtocolModule; port: number }>;
  offlineAfterS: number;
  loginTimeoutS: number;
  maxConnections: number;
  maxQueuedFrames: number;
}

export class Gateway {
  readonly stats: GatewayStats = newStats();
  private readonly servers: Array<{ protocol: ProtocolName; server: Server }> = [];
  private readonly connections = new Set<DeviceConnection>();
  private readonly byDevice = new Map<string, DeviceConnection>();
  private readonly directory: DeviceDirectory;
  private readonly unknownDevices: UnknownDeviceLog;

  constructor(private readonly options: GatewayOptions) {
    this.directory = new DeviceDirectory(options.store, options.clock);
    this.unknownDevices = new UnknownDeviceLog(options.store, options.clock, options.log);
  }

  /** Starts every listener; resolves with the ports actually bound (0 picks a free one). */
  async start(): Promise<Record<ProtocolName, number>> {
    const ports = {} as Record<ProtocolName, number>;
    for (const { protocol, port } of this.options.listeners) {
      const server = createServer({ noDelay: true }, (socket) => this.accept(socket, protocol));
      server.maxConnections = this.options.maxConnections;
      server.on('drop', (info) => this.options.log.warn({ protocol: protocol.name, remote: info?.remoteAddress }, 'connection cap reached; connection dropped'));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, this.options.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const address = server.address();
      ports[protocol.name] = typeof address === 'object' && address ? address.port : port;
      this.servers.push({ protocol: protocol.name, server });
    }
    return ports;
  }

  private accept(socket: import('node:net').Socket, protocol: ProtocolModule): void {
    this.stats.connections += 1;
    const connection = new DeviceConnection(socket, protocol, {
      store: this.options.store,
      clock: this.options.clock,
      log: this.options.log,
      directory: this.directory,
      unknownDevices: this.unknownDevices,
      stats: this.stats,
      offlineAfterMs: this.options.offlineAfterS * 1000,
      loginTimeoutMs: this.options.loginTimeoutS * 1000,
      maxQueuedFrames: this.options.maxQueuedFrames,
      onBound: (c) => {
        const id = c.deviceId!;
        const previous = this.byDevice.get(id);
        // A unit that redials while its old socket lingers: the newest connection wins.
        if (previous && previous !== c) previous.close('replaced', 'device reconnected');
        this.byDevice.set(id, c);
      },
      onClosed: (c) => {
        this.connections.delete(c);
        const id = c.deviceId;
        if (id && this.byDevice.get(id) === c) this.byDevice.delete(id);
      },
    });
    this.connections.add(connection);
  }

  get openConnections(): number {
    return this.connections.size;
  }

  /** Stops accepting, lets every connection finish the frame in hand, then closes them. */
  async stop(): Promise<void> {
    const closing = this.servers.map(
      ({ server }) => new Promise<void>((resolve) => server.close(() => resolve())),
    );
    await Promise.all([...this.connections].map((c) => c.shutdown()));
    await Promise.all(closing);
  }
}
