#!/usr/bin/env node
/**
 * Composition root: reads the configuration, opens the store, starts the roles asked for (gateway,
 * projections, api, webhooks; all by default), wires them together and handles signals. Each role
 * starts through its folder's role.ts; the `fleet` command line is cli/.
 */
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { systemClock } from './core/clock.js';
import type { Config, Role } from './core/config.js';
import { countAppends, sumAppendCounts } from './core/event-store/counting.js';
import { StoreWriteHealth } from './core/event-store/write-health.js';
import { openEventStore } from './core/event-store/open.js';
import type { EventStore } from './core/event-store/port.js';
import { createLogger, type Logger } from './core/logger.js';
import { ensureDemoCustomer } from './core/demo-customer.js';
import { limitHeapGrowthFromNowOn } from './core/heap-growth.js';
import type { RoleContext } from './core/role.js';
import { startRoleThread, threadEntry } from './core/role-thread.js';
import { SecretBox } from './core/secret-box.js';
import { nameThisThread } from './core/thread-name.js';
import { startBanner } from './cli/banner.js';
import { runCommandLine } from './cli/index.js';
import { startGateway, type GatewayRole } from './gateway/role.js';
import { historyItemEncoderModule } from './api/history-item-module.js';
import type { ApiRole } from './api/role.js';
import type { ProjectionRunner } from './projections/index.js';
import { startProjections } from './projections/role.js';
import { startWebhooks, type WebhooksRole } from './webhook-delivery/role.js';

export interface RunningPlatform {
  ports: { http: number | null; teltonika: number | null; gt06: number | null; jt808: number | null };
  store: EventStore;
  /** In this thread, or in a thread of its own (StartOptions.threads). */
  gateway: GatewayRole | null;
  runner: ProjectionRunner | null;
  /** In this thread, or in a thread of its own (StartOptions.threads). */
  webhooks: WebhooksRole | null;
  /** Applies everything the store holds now to every read model, the history included (none without the roles). */
  catchUp(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /**
   * Runs the gateway, webhook delivery and the position history each in a worker thread of its own, so
   * acks never wait behind projections or API requests, signing and sending webhooks does not share their
   * thread, and the history's rows are applied beside the other read models. `fleet` does so whenever a
   * role shares the process with another.
   */
  threads?: boolean;
  /** Hears of a role thread that died after it started. */
  onThreadFailure?: (err: Error) => void;
}

/**
 * Starts the asked roles; resolves once every listener is up. In order: the history's thread (it replays on
 * the other core while this thread does the rest), webhook delivery, the read models' catch-up, the API
 * (listening once the history has caught up), the gateway last; stop() goes the other way.
 */
export async function startPlatform(config: Config, roles: readonly Role[], log: Logger, options: StartOptions = {}): Promise<RunningPlatform> {
  const clock = systemClock;
  // Every role in this thread appends through the counted store, so /metrics sees the process's appends. Opened
  // (and created) before any thread opens its own handle on it.
  const { store, counts: appendCounts } = countAppends(await openEventStore(config.store, clock));
  const ctx: RoleContext = {
    config,
    store,
    clock,
    log,
    threads: options.threads ?? false,
    onThreadFailure: options.onThreadFailure ?? ((err: Error) => log.error({ err }, 'role thread failed')),
  };
  let gateway: GatewayRole | null = null;
  // The process's one "store writable" state: this thread's appends and probes, and the gateway thread's as its snapshots bring them.
  const appendSources = () => [appendCounts, ...(gateway?.appends ? [gateway.appends()] : [])];
  const writeHealth = new StoreWriteHealth({
    clock,
    log: log.child({ role: 'store' }),
    sources: appendSources,
    probe: store.probeWrite ? () => store.probeWrite!() : null,
  });
  const stopWriteHealth = writeHealth.start();
  const storeWrites = () => writeHealth.status();
  // Each role loads its modules as it starts, rather than with this file: the process's main thread, which only
  // watches the platform's thread (commandStart), and the operator commands start without them, and a process
  // loads only the roles it runs. Once the history's thread runs and before the read models' catch-up, which
  // holds this thread: the secret key loads (one for every role; its file, beside the data directory the read
  // models' database created, is written on the first start), webhook delivery starts, the API's modules load.
  const early: { secretBox: SecretBox | null; webhooks: WebhooksRole | null; api: typeof import('./api/role.js') | null } = {
    secretBox: null,
    webhooks: null,
    api: null,
  };
  const beforeCatchUp = async () => {
    early.secretBox = SecretBox.load(config.secretKey);
    if (roles.includes('webhooks')) early.webhooks = await startWebhooks(ctx, early.secretBox);
    if (roles.includes('api')) early.api = await import('./api/role.js');
  };
  // The API serves from the read models this thread keeps: it runs them too.
  const projections =
    roles.includes('projections') || roles.includes('api')
      ? await startProjections(ctx, {
          historyEncoder: { module: historyItemEncoderModule, load: async () => (await import('./api/history-item.js')).historyItemJson },
          beforeCatchUp,
        })
      : null;
  if (!projections) await beforeCatchUp();
  const { webhooks } = early;
  let api: ApiRole | null = null;
  if (projections && early.api) {
    api = await early.api.startApi(ctx, {
      secretBox: early.secretBox!,
      readModels: projections.reads,
      webhookDelivery: webhooks,
      metrics: {
        // The gateway thread appends through its own handle on the store: its counts are added.
        storeAppends: () => sumAppendCounts(appendSources()),
        storeWrites,
        // The gateway starts after the API (below); until then, and without that role, there is nothing to report.
        ...(roles.includes('gateway') ? { gateway: () => gateway?.metrics() ?? null } : {}),
      },
      storeWrites,
      listenAfter: projections.historyCaughtUp,
    });
  } else {
    await projections?.historyCaughtUp;
  }
  if (roles.includes('gateway')) gateway = await startGateway(ctx);
  const ports: RunningPlatform['ports'] = {
    http: api?.port ?? null,
    teltonika: gateway?.ports.teltonika ?? null,
    gt06: gateway?.ports.gt06 ?? null,
    jt808: gateway?.ports.jt808 ?? null,
  };
  return {
    ports,
    store,
    gateway,
    runner: projections?.runner ?? null,
    webhooks,
    async catchUp() {
      await projections?.catchUp();
    },
    async stop() {
      // Devices first (their last acks need the store), then the API, the runners, webhooks, then the log.
      await gateway?.stop();
      await api?.stop();
      await projections?.stop();
      await webhooks?.stop();
      stopWriteHealth();
      await store.close();
    },
  };
}

/** How the platform's thread is started (commandStart) and what it says back. */
interface PlatformThreadData {
  role: 'platform';
  config: Config;
  roles: Role[];
}
type FromPlatformThread = { type: 'started'; banner: string };
type ToPlatformThread = { type: 'stop'; signal: string };

/**
 * `fleet start`: the platform runs in a worker thread, and this main thread only watches it (signals,
 * exit code). A worker's young generation is sized like the role threads' (core/role-thread.ts); node's
 * own thread takes that only as a command-line flag, which every way of starting `fleet` would have to pass.
 */
async function commandStart(config: Config, roles: Role[]): Promise<void> {
  const data: PlatformThreadData = { role: 'platform', config, roles };
  const platform = await startRoleThread<FromPlatformThread>(threadEntry(import.meta.url, 'main'), data, (err) => {
    // The thread's own error, with the stack it was thrown at (an uncaught one), or the code it exited with.
    process.stderr.write(`${err.stack ?? err.message}\n`);
    process.exit(1);
  });
  process.stdout.write(platform.started.banner);
  limitHeapGrowthFromNowOn();
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    platform.stopping();
    platform.worker.once('exit', (code) => process.exit(code));
    const m: ToPlatformThread = { type: 'stop', signal };
    platform.worker.postMessage(m);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/** The platform's thread (commandStart): starts the roles, says so with the banner, and stops when told. */
async function runPlatformThread({ config, roles }: PlatformThreadData): Promise<void> {
  const log = createLogger(config.logLevel);
  // The gateway and webhook delivery get threads of their own when roles share the process; if one dies, so does the process.
  const platform = await startPlatform(config, roles, log, {
    threads: roles.length > 1,
    onThreadFailure: (err) => {
      log.fatal({ err }, 'a role thread failed; stopping');
      process.exit(1);
    },
  });
  const demo = roles.includes('api') && config.store.startsWith('sqlite:') ? await ensureDemoCustomer(config.dataDir, platform.store) : null;
  // The banner says the platform is ready: the demo login just created is in the read models, and /readyz agrees.
  if (demo?.createdNow) await platform.catchUp();
  parentPort!.once('message', (m: ToPlatformThread) => {
    log.info({ signal: m.signal }, 'stopping');
    void platform.stop().then(() => process.exit(0));
  });
  const banner = startBanner(config, { ports: platform.ports, webhooks: platform.webhooks !== null, demo });
  const started: FromPlatformThread = { type: 'started', banner };
  parentPort!.postMessage(started);
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (!isMainThread && (workerData as Partial<PlatformThreadData> | null)?.role === 'platform') {
  const data = workerData as PlatformThreadData;
  // Named after its role when it runs one alone; with several, it runs those that get no thread of their own.
  nameThisThread(data.roles.length === 1 ? data.roles[0]! : 'platform');
  // A failure to start ends the thread with the error, which commandStart reports.
  void runPlatformThread(data);
} else if (isMainThread && (invokedDirectly || process.env.FLEET_CLI === '1')) {
  runCommandLine(process.argv.slice(2), commandStart);
}
