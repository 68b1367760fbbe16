/**
 * Webhook delivery in a worker thread of its own, as `fleet` runs it when other roles
 * share the process. The API still reads an endpoint's deliveries and sends test
 * deliveries from its own thread (DeliveryLog over its own connection to the delivery
 * database); catching up and waiting for a command's event are asked of the thread.
 */
import Database from 'better-sqlite3';
import type { Worker } from 'node:worker_threads';
import type { Clock } from '../../core/clock.js';
import type { Config } from '../../core/config.js';
import { positionToString, type LogPosition } from '../../core/event-store/port.js';
import { startRoleThread, threadEntry } from '../../core/role-thread.js';
import type { SecretBox } from '../../core/secret-box.js';
import { DeliveryLog, type WebhookDeliveryAccess } from './delivery-log.js';
import { deliveryDbPath } from './from-config.js';
import type { FromWebhookThread, ToWebhookThread } from './thread-messages.js';

const ENTRY = threadEntry(import.meta.url, 'thread-entry');

export class WebhookThread implements WebhookDeliveryAccess {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  readonly reads: DeliveryLog;
  private stopped: Promise<void> | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly markStopping: () => void,
    private readonly db: Database.Database,
    box: SecretBox,
    config: Config,
    clock: Clock,
  ) {
    this.reads = new DeliveryLog(db, box, config.allowPrivateWebhookUrls, clock);
    worker.on('message', (m: FromWebhookThread) => {
      if (m.type !== 'answer') return;
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.error === null) w?.resolve();
      else w?.reject(new Error(m.error));
    });
  }

  /** Starts the thread; resolves once delivery has caught up with the log and runs. */
  static async start(config: Config, box: SecretBox, clock: Clock, onFailure: (err: Error) => void): Promise<WebhookThread> {
    const t = await startRoleThread<FromWebhookThread>(ENTRY, config, onFailure);
    // The thread created the database; this thread only reads it.
    const db = new Database(deliveryDbPath(config), { readonly: true, fileMustExist: true });
    return new WebhookThread(t.worker, t.stopping, db, box, config, clock);
  }

  private ask(request: { type: 'catchUp' } | { type: 'waitFor'; position: string }): Promise<void> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      const m: ToWebhookThread = { ...request, id };
      this.worker.postMessage(m);
    });
  }

  catchUp(): Promise<void> {
    return this.ask({ type: 'catchUp' });
  }

  waitFor(position: LogPosition): Promise<void> {
    return this.ask({ type: 'waitFor', position: positionToString(position) });
  }

  /** Lets the thread finish the attempts in flight and commit their outcomes, then ends it. */
  stop(): Promise<void> {
    this.stopped ??= new Promise<void>((resolve) => {
      this.markStopping();
      this.worker.once('exit', () => {
        this.db.close();
        for (const w of this.waiting.values()) w.reject(new Error('webhook delivery stopped'));
        resolve();
      });
      const m: ToWebhookThread = { type: 'stop' };
      this.worker.postMessage(m);
    });
    return this.stopped;
  }
}
