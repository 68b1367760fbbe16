#!/usr/bin/env node
/**
 * Composition root: reads the configuration, opens the store and starts the
 * roles asked for (gateway, projections, api; all by default, one process on
 * the embedded store). Also the `fleet` command line (COMMANDS below; `fleet help`).
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { systemClock } from './core/clock.js';
import { ALL_ROLES, ConfigError, loadConfig, type Config, type Role } from './core/config.js';
import { countAppends, sumAppendCounts } from './core/event-store/counting.js';
import { StoreWriteHealth } from './core/event-store/write-health.js';
import { openEventStore } from './core/event-store/open.js';
import type { EventStore } from './core/event-store/port.js';
import type { Plan } from './core/events.js';
import { createLogger, type Logger } from './core/logger.js';
import { PLANS, createCustomer, setCustomerRateLimit, setCustomerWebhookLimit } from './core/commands/customers.js';
import { CommandRejected } from './core/commands/rejection.js';
import { ensureDemoCustomer, type DataDirDemo } from './core/demo-customer.js';
import { generatePassword } from './core/passwords.js';
import { limitHeapGrowthFromNowOn } from './core/heap-growth.js';
import { startRoleThread, threadEntry } from './core/role-thread.js';
import { nameThisThread } from './core/thread-name.js';
import type { Gateway } from './gateway/server.js';
import type { GatewayThread } from './gateway/thread.js';
import type Database from 'better-sqlite3';
import { historyItemEncoderModule } from './api/history-item-module.js';
import type { HistoryRole, ProjectionRunner } from './projections/index.js';
import { dropHistoryFromReadModels, historyDbPath, openHistoryReads, type HistoryReads } from './projections/history/database.js';
import { HistoryThread } from './projections/history/thread.js';
import { openReadModelDb, readModelsDbPath } from './projections/runner.js';
import type { WebhookDeliveryAccess } from './projections/webhooks/index.js';
import { checkpointInBackground, type WalCheckpointer } from './core/wal-checkpointer.js';
import { SecretBox } from './core/secret-box.js';

export interface RunningPlatform {
  ports: { http: number | null; teltonika: number | null; gt06: number | null; jt808: number | null };
  store: EventStore;
  /** In this thread, or in a thread of its own (StartOptions.threads). */
  gateway: Pick<Gateway, 'stats' | 'openConnections' | 'stop'> | null;
  runner: ProjectionRunner | null;
  /** In this thread, or in a thread of its own (StartOptions.threads). */
  webhooks: (WebhookDeliveryAccess & { stop(): Promise<void> }) | null;
  /** Applies everything the store holds now to every read model, the history included (none without the roles). */
  catchUp(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /**
   * Runs the gateway, webhook delivery and the position history each in a worker thread
   * of its own (gateway/thread.ts, projections/webhooks/thread.ts,
   * projections/history/thread.ts), so acks never wait behind projections or API
   * requests, signing and sending webhooks does not share their thread, and the
   * history's rows are applied beside the other read models. `fleet` does so whenever a
   * role shares the process with another.
   */
  threads?: boolean;
  /** Hears of a role thread that died after it started. */
  onThreadFailure?: (err: Error) => void;
}

/**
 * The read models' database (the API serves from it, this thread keeps it), with a history of
 * an older layout moved out of it; the history's readers' connection; and with
 * `onThreadFailure` the history's thread started.
 */
function openReadModels(
  config: Config,
  onThreadFailure: ((err: Error) => void) | null,
): { db: Database.Database; historyReads: HistoryReads; historyThread: Promise<HistoryThread> | null } {
  const db = openReadModelDb(readModelsDbPath(config.dataDir));
  dropHistoryFromReadModels(db);
  const historyReads = openHistoryReads(historyDbPath(config.dataDir));
  if (!onThreadFailure) return { db, historyReads, historyThread: null };
  const historyThread = HistoryThread.start(config, historyItemEncoderModule, onThreadFailure);
  // Awaited once this thread has caught up (startPlatform); a failure before that is not unhandled.
  historyThread.catch(() => {});
  return { db, historyReads, historyThread };
}

/** Starts the asked roles; resolves once every listener is up. */
export async function startPlatform(config: Config, roles: readonly Role[], log: Logger, options: StartOptions = {}): Promise<RunningPlatform> {
  const clock = systemClock;
  // Every role appends through the counted store, so /metrics sees the process's appends. Opened (and created) before
  // any thread opens its own handle on it.
  const { store, counts: appendCounts } = countAppends(await openEventStore(config.store, clock));
  const onThreadFailure = options.onThreadFailure ?? ((err: Error) => log.error({ err }, 'role thread failed'));
  // The history's thread starts before this thread loads the roles' modules (below): it loads its own and
  // replays on the other core meanwhile (started after them, it was the last to catch up in a rebuild).
  const readModels = roles.includes('projections') || roles.includes('api') ? openReadModels(config, options.threads ? onThreadFailure : null) : null;
  let runner: ProjectionRunner | null = null;
  let history: HistoryRole | null = null;
  let readModelCheckpointer: WalCheckpointer | null = null;
  let gateway: RunningPlatform['gateway'] = null;
  let gatewayThread: GatewayThread | null = null;
  // The process's one "store writable" state: this thread's appends and probes, and the gateway thread's as its snapshots bring them.
  const appendSources = () => (gatewayThread ? [appendCounts, gatewayThread.appends] : [appendCounts]);
  const writeHealth = new StoreWriteHealth({
    clock,
    log: log.child({ role: 'store' }),
    sources: appendSources,
    probe: store.probeWrite ? () => store.probeWrite!() : null,
  });
  const stopWriteHealth = writeHealth.start();
  const storeWrites = () => writeHealth.status();
  let stopApp: (() => Promise<void>) | null = null;
  const ports: RunningPlatform['ports'] = { http: null, teltonika: null, gt06: null, jt808: null };
  // Loaded once: a key file is created on the first start, and every role seals and opens with the same key.
  const secretBox = SecretBox.load(config.secretKey);
  let webhooks: RunningPlatform['webhooks'] = null;
  // Each role loads its modules as it starts, rather than with this file: the process's main thread, which only
  // watches the platform's thread (commandStart), and the operator commands start without them (0.6 s for all),
  // and a process loads only the roles it runs.
  if (roles.includes('webhooks')) {
    if (options.threads) {
      const { WebhookThread } = await import('./projections/webhooks/thread.js');
      webhooks = await WebhookThread.start(config, secretBox, clock, onThreadFailure);
    } else {
      const { webhookDeliveryFromConfig } = await import('./projections/webhooks/from-config.js');
      const inProcess = webhookDeliveryFromConfig(config, store, clock, log.child({ role: 'webhooks' }), secretBox);
      await inProcess.start();
      webhooks = inProcess;
    }
  }

  if (readModels) {
    const { db, historyReads, historyThread } = readModels;
    const [{ ProjectionRunner, readModelProjections, startHistory }, apiModules] = await Promise.all([
      import('./projections/index.js'),
      // Before the catch-up, which holds this thread: the history's thread replays on the other core meanwhile.
      roles.includes('api') ? Promise.all([import('./api/app.js'), import('./api/server.js'), import('./projections/view.js')]) : null,
    ]);
    const inProcessHistory = async () => {
      const { historyItemJson } = await import('./api/history-item.js');
      return startHistory(store, historyDbPath(config.dataDir), historyItemJson, log.child({ role: 'history' }));
    };
    // Projection batches and API requests share this thread: checkpoints (and their fsync) run beside it.
    readModelCheckpointer = checkpointInBackground(db);
    // Batches of 16,000 while it catches up at start (the API is built after): a replay of 500,000 fixes of
    // 1000 devices took 5.2-5.4 s in this thread alone, against 5.7-6.2 s in the live path's 4,000.
    runner = new ProjectionRunner(store, db, readModelProjections(), log.child({ role: 'projections' }), { startBatch: 16_000 });
    // The history catches up beside the other read models: a replay or a backlog is applied on two cores.
    const historyStarting = historyThread ?? inProcessHistory();
    // Awaited after this thread's own catch-up: a failure meanwhile is not unhandled.
    historyStarting.catch(() => {});
    await runner.start();
    if (apiModules) {
      const [{ buildApp }, { listen, stopApi }, { runnerView }] = apiModules;
      const r = runner;
      // Built (its route schemas compiled) while the history may still be catching up; it listens once that is done.
      const app = await buildApp(
        {
          store,
          clock,
          readModelDb: db,
          historyDbPath: historyDbPath(config.dataDir),
          // After the read-model database: opening it created the data directory, beside which the key file lives.
          secretBox,
          waitFor: (p) => r.waitFor(p),
          catchUp: () => r.catchUp(),
          projections: runnerView(r, historyReads, store, clock),
          storeWrites,
          webhookDelivery: webhooks,
          settings: {
            publicUrl: config.publicUrl,
            allowPrivateWebhookUrls: config.allowPrivateWebhookUrls,
            panelTileUrl: config.panelTileUrl,
            panelTileAttribution: config.panelTileAttribution,
          },
          metrics: {
            // The gateway thread appends through its own handle on the store: its counts are added.
            storeAppends: () => sumAppendCounts(appendSources()),
            storeWrites,
            // The gateway starts after the API (below); until then, and without that role, there is nothing to report.
            ...(roles.includes('gateway') ? { gateway: () => (gateway ? { stats: gateway.stats, openConnections: gateway.openConnections } : null) } : {}),
          },
        },
        log.child({ role: 'api' }),
      );
      stopApp = () => stopApi(app);
      await app.ready();
      history = await historyStarting;
      ports.http = await listen(app, config.httpHost, config.httpPort);
    } else {
      history = await historyStarting;
    }
  }
  if (roles.includes('gateway')) {
    let bound: Record<'teltonika' | 'gt06' | 'jt808', number>;
    if (options.threads) {
      const { GatewayThread } = await import('./gateway/thread.js');
      const started = await GatewayThread.start(config, onThreadFailure);
      gatewayThread = started.thread;
      gateway = started.thread;
      bound = started.ports;
    } else {
      const { gatewayFromConfig } = await import('./gateway/from-config.js');
      const inProcess = gatewayFromConfig(config, store, clock, log.child({ role: 'gateway' }));
      gateway = inProcess;
      bound = await inProcess.start();
    }
    ports.teltonika = bound.teltonika;
    ports.gt06 = bound.gt06;
    ports.jt808 = bound.jt808;
  }
  return {
    ports,
    store,
    gateway,
    runner,
    webhooks,
    async catchUp() {
      await Promise.all([runner?.catchUp(), history?.catchUp()]);
    },
    async stop() {
      // Devices first (their last acks need the store), then the API, then the log.
      await gateway?.stop();
      await stopApp?.();
      await runner?.stop();
      await history?.stop();
      readModels?.historyReads.close();
      readModelCheckpointer?.close();
      await webhooks?.stop();
      stopWriteHealth();
      await store.close();
    },
  };
}

/** The banner's panel line: the demo login's password on the start that created it, else where it is kept. */
function panelLine(port: number, demo: DataDirDemo | null): string {
  const url = `http://localhost:${port}/`;
  if (!demo) return `  Panel:       ${url}`;
  return demo.createdNow
    ? `  Panel:       ${url}  (log in as ${demo.email} / ${demo.password})`
    : `  Panel:       ${url}  (log in as ${demo.email}; the password is kept in ${demo.file})`;
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
 * `fleet start`: the platform runs in a worker thread, and this main thread only watches it
 * (signals, exit code). A worker's young generation is sized like the role threads'
 * (core/role-thread.ts); node's own thread takes that only as a command-line flag, which every
 * way of starting `fleet` would have to pass. The read models' rebuild ran about 8% faster so.
 */
async function commandStart(values: { roles?: string | undefined }): Promise<void> {
  const data: PlatformThreadData = { role: 'platform', config: loadConfig(), roles: parseRoles(values.roles) };
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
  const lines = [
    '',
    'Fleet platform is running',
    `  store:       ${config.store}`,
    platform.ports.http !== null ? `  REST API:    http://localhost:${platform.ports.http}/v1  (health: /healthz)` : null,
    platform.ports.http !== null ? panelLine(platform.ports.http, demo) : null,
    platform.ports.teltonika !== null ? `  Teltonika:   tcp://localhost:${platform.ports.teltonika}` : null,
    platform.ports.gt06 !== null ? `  GT06:        tcp://localhost:${platform.ports.gt06}` : null,
    platform.ports.jt808 !== null ? `  JT/T 808:    tcp://localhost:${platform.ports.jt808}` : null,
    platform.webhooks
      ? `  Webhooks:    delivering${config.allowPrivateWebhookUrls ? ' (private and plain-http URLs allowed: FLEET_WEBHOOK_ALLOW_PRIVATE)' : ''}; manage them at /v1/webhooks`
      : null,
    demo ? `  Demo customer ${demo.customer_id}` : null,
    demo?.createdNow ? `  Log in with:  Authorization: Bearer ${demo.api_key}  (shown on this first start only, like the panel password; kept in ${demo.file})` : null,
    demo?.createdNow
      ? `  Try:          curl -H "Authorization: Bearer ${demo.api_key}" http://localhost:${platform.ports.http}/v1/positions/latest`
      : null,
    demo && !demo.createdNow ? `  Log in with the demo API key and panel password kept in ${demo.file} (readable by you only)` : null,
    '',
  ].filter((l): l is string => l !== null);
  parentPort!.once('message', (m: ToPlatformThread) => {
    log.info({ signal: m.signal }, 'stopping');
    void platform.stop().then(() => process.exit(0));
  });
  const started: FromPlatformThread = { type: 'started', banner: lines.join('\n') + '\n' };
  parentPort!.postMessage(started);
}

interface CustomerCreateValues {
  name?: string;
  plan?: string;
  'speed-limit-kmh'?: string;
  email?: string;
  'user-name'?: string;
  json?: boolean;
}

async function commandCustomerCreate(values: CustomerCreateValues): Promise<void> {
  const plan = values.plan ?? 'free';
  if (!values.name) throw new ConfigError('customer create needs --name NAME');
  if (!PLANS.includes(plan as Plan)) throw new ConfigError(`--plan must be one of ${PLANS.join(', ')}`);
  const rawLimit = values['speed-limit-kmh'];
  const speedLimit = rawLimit === undefined ? null : Number(rawLimit);
  if (speedLimit !== null && !(speedLimit >= 1 && speedLimit <= 300)) throw new ConfigError('--speed-limit-kmh must be a number from 1 to 300');
  if (values['user-name'] !== undefined && values.email === undefined) throw new ConfigError('--user-name goes with --email');
  const password = generatePassword();
  const firstUser = values.email === undefined ? undefined : { email: values.email, name: values['user-name'] ?? values.name, password };
  const config = loadConfig();
  const store = await openEventStore(config.store, systemClock);
  try {
    const created = await createCustomer(store, systemClock, {
      name: values.name,
      plan: plan as Plan,
      speed_limit_kmh: speedLimit,
      ...(firstUser ? { first_user: firstUser } : {}),
    });
    const login = created.user ? { email: created.user.email, password } : null;
    const out = { customer_id: created.customer_id, api_key: created.api_key, ...login };
    const text = [
      `customer ${out.customer_id}`,
      `api key  ${out.api_key}  (shown once: keep it)`,
      ...(login ? [`login    ${login.email}`, `password ${login.password}  (shown once: keep it)`] : []),
    ];
    process.stdout.write(values.json ? JSON.stringify(out) + '\n' : text.join('\n') + '\n');
  } catch (err) {
    if (err instanceof CommandRejected) throw new ConfigError(err.field ? `--${err.field.slice(1)}: ${err.detail}` : err.detail);
    throw err;
  } finally {
    await store.close();
  }
}

/** An Enterprise agreement: the customer's own request rate, or back to its plan's with --plan-default. */
async function commandCustomerSetRateLimit(values: { customer?: string; 'per-minute'?: string; burst?: string; 'plan-default'?: boolean }): Promise<void> {
  const planDefault = values['plan-default'] ?? false;
  if (!values.customer) throw new ConfigError('customer set-rate-limit needs --customer ID');
  const given = values['per-minute'] !== undefined || values.burst !== undefined;
  if (given === planDefault) throw new ConfigError('give either --per-minute N --burst N, or --plan-default');
  const limit = given ? { per_minute: Number(values['per-minute']), burst: Number(values.burst) } : null;
  await withStore(values.customer, '--per-minute and --burst must both be whole numbers of at least 1', async (store) => {
    await setCustomerRateLimit(store, systemClock, values.customer!, limit);
    process.stdout.write(
      limit
        ? `customer ${values.customer}: ${limit.per_minute} requests a minute, bursts of ${limit.burst}\n`
        : `customer ${values.customer}: its plan's rate limit\n`,
    );
  });
}

/**
 * Runs an operator command on the configured store and closes it; a refusal
 * becomes the command line's error (`invalid`: `invalidMessage`, else the command's own detail).
 */
async function withStore(customer: string, invalidMessage: string | null, run: (store: EventStore) => Promise<void>): Promise<void> {
  const store = await openEventStore(loadConfig().store, systemClock);
  try {
    await run(store);
  } catch (err) {
    if (err instanceof CommandRejected) throw new ConfigError(err.kind === 'not_found' ? `no customer ${customer}` : (invalidMessage ?? err.detail));
    throw err;
  } finally {
    await store.close();
  }
}

function parseRoles(raw: string | undefined): Role[] {
  if (!raw) return [...ALL_ROLES];
  const roles = raw.split(',').map((r) => r.trim());
  for (const r of roles) if (!ALL_ROLES.includes(r as Role)) throw new ConfigError(`unknown role ${r}; roles are ${ALL_ROLES.join(', ')}`);
  return roles as Role[];
}

/** One command of the `fleet` line: its words, its options (node:util parseArgs) and its help. */
interface Command {
  words: string[];
  synopsis: string;
  summary: string;
  /** Each option: the placeholder of its value (none: a flag) and what it does. */
  options: Record<string, { value?: string; help: string }>;
  run(values: Record<string, string | boolean | undefined>): Promise<void>;
}

/** An Enterprise agreement on webhooks: the customer's own deliveries a second, or back to the default with --plan-default. */
async function commandCustomerSetWebhookLimit(values: { customer?: string; 'per-second'?: string; 'plan-default'?: boolean }): Promise<void> {
  const planDefault = values['plan-default'] ?? false;
  if (!values.customer) throw new ConfigError('customer set-webhook-limit needs --customer ID');
  if ((values['per-second'] !== undefined) === planDefault) throw new ConfigError('give either --per-second N, or --plan-default');
  const perS = planDefault ? null : Number(values['per-second']);
  await withStore(values.customer, null, async (store) => {
    await setCustomerWebhookLimit(store, systemClock, values.customer!, perS);
    process.stdout.write(perS ? `customer ${values.customer}: ${perS} webhook deliveries a second\n` : `customer ${values.customer}: its plan's webhook rate\n`);
  });
}

const COMMANDS: readonly Command[] = [
  {
    words: ['start'],
    synopsis: 'fleet [start] [--roles gateway,projections,api]',
    summary: 'Starts the platform on the configured store (FLEET_* environment variables; all roles by default).',
    options: { roles: { value: 'ROLES', help: `comma-separated roles to run in this process: ${ALL_ROLES.join(', ')}` } },
    run: (v) => commandStart(v as { roles?: string }),
  },
  {
    words: ['customer', 'create'],
    synopsis: 'fleet customer create --name NAME [--plan free|pro|enterprise] [--speed-limit-kmh N] [--email EMAIL [--user-name NAME]] [--json]',
    summary: 'Creates a customer and prints a full-access API key for it, and with --email its first panel login and password (shown once).',
    options: {
      name: { value: 'NAME', help: "the customer's name" },
      plan: { value: 'PLAN', help: `${PLANS.join(', ')} (default free)` },
      'speed-limit-kmh': { value: 'N', help: "default overspeed threshold of the customer's devices, 1 to 300" },
      email: { value: 'EMAIL', help: 'creates the first panel user with this email and a generated password' },
      'user-name': { value: 'NAME', help: "the panel user's name (default: the customer's name)" },
      json: { help: 'print {"customer_id","api_key"} (with --email also "email","password") as JSON' },
    },
    run: (v) => commandCustomerCreate(v as CustomerCreateValues),
  },
  {
    words: ['customer', 'set-rate-limit'],
    synopsis: 'fleet customer set-rate-limit --customer ID (--per-minute N --burst N | --plan-default)',
    summary: "Enters an Enterprise customer's agreed request rate, or returns it to its plan's.",
    options: {
      customer: { value: 'ID', help: 'the customer id (cus_...)' },
      'per-minute': { value: 'N', help: 'requests a minute, a whole number of at least 1' },
      burst: { value: 'N', help: 'requests at once, a whole number of at least 1' },
      'plan-default': { help: "back to the plan's rate limit" },
    },
    run: (v) => commandCustomerSetRateLimit(v as { customer?: string; 'per-minute'?: string; burst?: string; 'plan-default'?: boolean }),
  },
  {
    words: ['customer', 'set-webhook-limit'],
    synopsis: 'fleet customer set-webhook-limit --customer ID (--per-second N | --plan-default)',
    summary: "Enters an Enterprise customer's agreed webhook deliveries a second, or returns it to the default.",
    options: {
      customer: { value: 'ID', help: 'the customer id (cus_...)' },
      'per-second': { value: 'N', help: 'webhook deliveries a second, a whole number from 1 to 100000' },
      'plan-default': { help: "back to the plan's webhook rate" },
    },
    run: (v) => commandCustomerSetWebhookLimit(v as { customer?: string; 'per-second'?: string; 'plan-default'?: boolean }),
  },
];

const USAGE = [
  'usage:',
  ...COMMANDS.map((c) => `  ${c.synopsis}`),
  '  fleet help [COMMAND]',
  '',
  "Run 'fleet help COMMAND' or 'fleet COMMAND --help' for a command's options.",
  '',
].join('\n');

function commandUsage(c: Command): string {
  const flags = Object.entries(c.options).map(([name, o]) => [`--${name}${o.value ? ` ${o.value}` : ''}`, o.help]);
  flags.push(['-h, --help', 'this help']);
  const width = Math.max(...flags.map(([f]) => f!.length)) + 2;
  return [`usage: ${c.synopsis}`, '', c.summary, '', 'options:', ...flags.map(([f, h]) => `  ${f!.padEnd(width)}${h}`), ''].join('\n');
}

/** A command line we cannot run as written: one line saying why, then the usage; exit code 2. */
class UsageError extends Error {
  constructor(message: string, readonly usage: string) {
    super(message);
  }
}

const isHelp = (arg: string): boolean => arg === '--help' || arg === '-h';

/** The command the words name, and the arguments after them; `fleet`, `fleet --roles …` are `start`. */
function findCommand(argv: string[]): { command: Command; args: string[] } | null {
  if (argv.length === 0 || argv[0]!.startsWith('-')) return { command: COMMANDS[0]!, args: argv };
  for (const command of COMMANDS) {
    if (command.words.every((w, i) => argv[i] === w)) return { command, args: argv.slice(command.words.length) };
  }
  return null;
}

function usageOfWords(words: string[]): string | null {
  const matching = COMMANDS.filter((c) => words.every((w, i) => c.words[i] === w));
  if (matching.length === 0) return null;
  return matching.length === 1 ? commandUsage(matching[0]!) : `usage:\n${matching.map((c) => `  ${c.synopsis}`).join('\n')}\n`;
}

/** parseArgs' errors, said in one line (its own messages run to several sentences). */
function parseError(err: Error & { code?: string }, c: Command): UsageError {
  const quoted = /'([^']+)'/.exec(err.message)?.[1] ?? '';
  const where = `fleet ${c.words.join(' ')}`;
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(`${where}: unknown option ${quoted}`, commandUsage(c));
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(`${where}: unexpected argument ${quoted}`, commandUsage(c));
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return new UsageError(`${where}: ${quoted.replace(/ <value>$/, '')} needs a value`, commandUsage(c));
    default:
      return new UsageError(`${where}: ${err.message.split('. ')[0]}`, commandUsage(c));
  }
}

export async function cli(argv: string[]): Promise<void> {
  if (argv.length === 1 && isHelp(argv[0]!)) return void process.stdout.write(USAGE);
  if (argv[0] === 'help') {
    const words = argv.slice(1).filter((w) => !isHelp(w));
    const usage = words.length === 0 ? USAGE : usageOfWords(words);
    if (usage === null) throw new UsageError(`fleet help: no command ${words.join(' ')}`, USAGE);
    return void process.stdout.write(usage);
  }
  const found = findCommand(argv);
  if (!found) {
    // `fleet customer`, `fleet customer --help`, `fleet customer delete`: about the customer commands.
    const first = argv[0]!;
    const group = usageOfWords([first]);
    if (group === null) throw new UsageError(`fleet: unknown command ${first}`, USAGE);
    const rest = argv.slice(1);
    if (rest.length === 0) throw new UsageError(`fleet ${first}: which command?`, group);
    if (rest.length === 1 && isHelp(rest[0]!)) return void process.stdout.write(group);
    throw new UsageError(`fleet ${first}: unknown command ${rest[0]}`, group);
  }
  const { command, args } = found;
  const beforeSeparator = args.indexOf('--') === -1 ? args : args.slice(0, args.indexOf('--'));
  if (beforeSeparator.some(isHelp)) return void process.stdout.write(commandUsage(command));
  let values: Record<string, string | boolean | undefined>;
  try {
    const options = Object.fromEntries(Object.entries(command.options).map(([name, o]) => [name, { type: o.value ? ('string' as const) : ('boolean' as const) }]));
    ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false }));
  } catch (err) {
    throw parseError(err as Error & { code?: string }, command);
  }
  return command.run(values);
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (!isMainThread && (workerData as Partial<PlatformThreadData> | null)?.role === 'platform') {
  const data = workerData as PlatformThreadData;
  // Named after its role when it runs one alone; with several, it runs those that get no thread of their own.
  nameThisThread(data.roles.length === 1 ? data.roles[0]! : 'platform');
  // A failure to start ends the thread with the error, which commandStart reports.
  void runPlatformThread(data);
} else if (isMainThread && (invokedDirectly || process.env.FLEET_CLI === '1')) {
  cli(process.argv.slice(2)).catch((err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n\n${err.usage}`);
      process.exit(2);
    }
    process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  });
}
