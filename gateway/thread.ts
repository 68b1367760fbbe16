/**
 * The gateway in a worker thread of its own, as `fleet` runs it when other roles share
 * the process: a projection batch or a slow API request on the main thread no longer
 * delays a device's ack. The thread opens its own handle on the store; on SQLite, the
 * main thread's subscribers hear of its commits at once (core/event-store/sqlite.ts).
 * Counters arrive once a second (thread-entry.ts), so /metrics may lag them by that much.
 */
import type { Worker } from 'node:worker_threads';
import type { Config } from '../core/config.js';
import { startRoleThread, threadEntry } from '../core/role-thread.js';
import { newAppendCounts, type AppendCounts } from '../core/event-store/counting.js';
import type { ProtocolName } from './protocol.js';
import { newStats, type GatewayCounters } from './stats.js';
import type { FromGatewayThread, GatewaySnapshot, ToGatewayThread } from './thread-messages.js';

const ENTRY = threadEntry(import.meta.url, 'thread-entry');

export class GatewayThread {
  private latest: GatewaySnapshot = { stats: newStats(), openConnections: 0, appends: newAppendCounts() };
  private stopped: Promise<void> | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly markStopping: () => void,
  ) {
    worker.on('message', (m: FromGatewayThread) => {
      if (m.type === 'snapshot' || m.type === 'stopped') this.latest = m;
    });
  }

  /**
   * Starts the thread; resolves with the bound ports once every listener is up. `onFailure`
   * hears of a thread that dies after that (the process should stop: no device is served).
   */
  static async start(config: Config, onFailure: (err: Error) => void): Promise<{ thread: GatewayThread; ports: Record<ProtocolName, number> }> {
    const t = await startRoleThread<FromGatewayThread>(ENTRY, config, onFailure);
    if (t.started.type !== 'started') throw new Error('unexpected first message of the gateway thread');
    return { thread: new GatewayThread(t.worker, t.stopping), ports: t.started.ports };
  }

  get stats(): GatewayCounters {
    return this.latest.stats;
  }

  get openConnections(): number {
    return this.latest.openConnections;
  }

  /** The thread's own appends (it has its own handle on the store), and whether it last wrote or failed to (write-health.ts). */
  get appends(): AppendCounts {
    return this.latest.appends;
  }

  /** Drains the connections (their last acks), closes the thread's store, and ends the thread. */
  stop(): Promise<void> {
    this.stopped ??= new Promise<void>((resolve) => {
      this.markStopping();
      this.worker.once('exit', () => resolve());
      const m: ToGatewayThread = { type: 'stop' };
      this.worker.postMessage(m);
    });
    return this.stopped;
  }
}
