/**
 * Webhook delivery in a worker thread of its own, as `fleet` runs it when other roles
 * share the process. The API still reads an endpoint's deliveries and sends test
 * deliveries from its own thread (DeliveryLog over its own connection to the delivery
 * database); catching up and waiting for a command's event are asked of the thread.
 */
import Database from 'better-sqlite3';
import type { Worker } from 'node:worker_threads';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { startRoleThread, threadEntry } from '../core/role-thread.js';
import type { SecretBox } from '../core/secret-box.js';
import { RunnerThreadHost, type FromRunnerThread } from '../core/runner-thread.js';
import { DeliveryLog, type WebhookDeliveryAccess } from './delivery-log.js';
import { deliveryDbPath } from './from-config.js';

const ENTRY = threadEntry(import.meta.url, 'thread-entry');

export class WebhookThread extends RunnerThreadHost implements WebhookDeliveryAccess {
  readonly reads: DeliveryLog;

  /** Starts the thread; resolves once delivery has caught up with the log and runs. */
  static async start(config: Config, box: SecretBox, clock: Clock, onFailure: (err: Error) => void): Promise<WebhookThread> {
    const t = await startRoleThread<FromRunnerThread>(ENTRY, config, onFailure);
    // The thread created the database; this thread only reads it.
    const db = new Database(deliveryDbPath(config.dataDir), { readonly: true, fileMustExist: true });
    return new WebhookThread(t.worker, t.stopping, db, box, config, clock);
  }

  private constructor(
    worker: Worker,
    stopping: () => void,
    private readonly db: Database.Database,
    box: SecretBox,
    config: Config,
    clock: Clock,
  ) {
    super(worker, stopping, 'webhook delivery');
    this.reads = new DeliveryLog(db, box, config.allowPrivateWebhookUrls, clock);
  }

  /** Lets the thread finish the attempts in flight and commit their outcomes, then ends it. */
  stop(): Promise<void> {
    return this.stopThread(() => this.db.close());
  }
}
