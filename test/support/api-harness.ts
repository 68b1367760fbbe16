/** An in-process API over a temporary SQLite store, with real projections. */
import type Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app.js';
import type { ApiContext } from '../../api/context.js';
import { ManualClock } from '../../core/clock.js';
import type { Plan, Scope } from '../../core/events.js';
import type { LogPosition } from '../../core/event-store/port.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { silentLogger } from '../../core/logger.js';
import { SecretBox } from '../../core/secret-box.js';
import { streams } from '../../core/streams.js';
import { createCustomer } from '../../core/commands/customers.js';
import { newApiKeyEvent } from '../../core/commands/credentials.js';
import { historyItemJson } from '../../api/history-item.js';
import { ProjectionRunner, historyDbPath, openHistoryReads, openReadModelDb, readModelProjections, startHistory, type HistoryRole } from '../../projections/index.js';
import { runnerView } from '../../projections/view.js';
import { webhookFeed } from '../../projections/webhooks/feed.js';
import { WebhookDelivery } from '../../webhook-delivery/index.js';

export interface ApiHarness {
  app: FastifyInstance;
  store: SqliteEventStore;
  clock: ManualClock;
  runner: ProjectionRunner;
  /** The position history's runner (in this thread, over its own database). */
  history: HistoryRole;
  readModelDb: Database.Database;
  /** Resolves once every read model, the history included, includes the event at `position`. */
  waitFor(position: LogPosition): Promise<void>;
  /** Applies everything the store holds now to every read model, the history included. */
  catchUp(): Promise<void>;
  /** The key webhook secrets are sealed with (a random one per harness). */
  secretBox: SecretBox;
  newCustomer(name?: string, plan?: Plan): Promise<{ customerId: string; apiKey: string }>;
  newKey(customerId: string, scopes: Scope[]): Promise<string>;
  close(): Promise<void>;
}

/**
 * Options a suite may set: API settings (rate limits, intervals), metrics
 * sources and the store's write health. Webhook URLs on loopback are allowed unless a suite sets
 * `allowPrivateWebhookUrls: false`: test receivers listen on 127.0.0.1.
 */
export type HarnessOptions = Pick<ApiContext, 'settings' | 'metrics' | 'storeWrites'>;

export async function startApiHarness(options: HarnessOptions = {}): Promise<ApiHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-api-'));
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0));
  const store = new SqliteEventStore(join(dir, 'events.sqlite'), { clock, synchronous: 'OFF' });
  const db = openReadModelDb(join(dir, 'readmodels.sqlite'));
  const runner = new ProjectionRunner(store, db, readModelProjections(), silentLogger);
  await runner.start();
  const history = await startHistory(store, historyDbPath(dir), historyItemJson, silentLogger);
  const historyReads = openHistoryReads(historyDbPath(dir));
  const secretBox = SecretBox.fromKey(randomBytes(32));
  const webhookDelivery = new WebhookDelivery({
    store, clock, log: silentLogger, dbPath: join(dir, 'webhooks.sqlite'), box: secretBox, allowPrivate: true, enterprisePerS: 1000,
    feed: webhookFeed({ store, clock, log: silentLogger }),
  });
  await webhookDelivery.start();
  const app = await buildApp(
    {
      store,
      clock,
      readModelDb: db,
      historyDbPath: historyDbPath(dir),
      secretBox,
      waitFor: (p) => runner.waitFor(p),
      catchUp: () => runner.catchUp(),
      projections: runnerView(runner, historyReads, store, clock),
      webhookDelivery,
      ...options,
      settings: { allowPrivateWebhookUrls: true, ...options.settings },
    },
    silentLogger,
  );
  await app.ready();
  return {
    app,
    store,
    clock,
    runner,
    history,
    readModelDb: db,
    async waitFor(position) {
      await Promise.all([runner.waitFor(position), history.waitFor(position)]);
    },
    async catchUp() {
      await Promise.all([runner.catchUp(), history.catchUp()]);
    },
    secretBox,
    async newCustomer(name = 'Acme Haulage', plan: Plan = 'pro') {
      const c = await createCustomer(store, clock, { name, plan });
      return { customerId: c.customer_id, apiKey: c.api_key };
    },
    async newKey(customerId, scopes) {
      const key = newApiKeyEvent(customerId, 'test key', scopes, clock.now());
      await store.appendToStream(streams.tenant(customerId), [key.event]);
      return key.secret;
    },
    async close() {
      await app.close();
      await runner.stop();
      await history.stop();
      historyReads.close();
      await webhookDelivery.stop();
      await store.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The Authorization header of a bearer credential. */
export function bearer(credential: string): { authorization: string } {
  return { authorization: `Bearer ${credential}` };
}

/** Makes the harness's app listen on a free loopback port; returns its base URL (for real sockets: streams, raw requests). */
export async function listenOnLoopback(h: ApiHarness): Promise<string> {
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const address = h.app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

/** Closes a harness that listened: fetch (undici) may hold a spare connection that never sends a request, which Node would wait on. */
export async function closeListening(h: ApiHarness): Promise<void> {
  const closing = h.close();
  h.app.server.closeAllConnections();
  await closing;
}
