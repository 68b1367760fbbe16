#!/usr/bin/env node
/**
 * Composition root: reads the configuration, opens the store, starts the roles asked for (gateway,
 * projections, api, webhooks; all by default), wires them together and handles signals. Each role
 * starts through its folder's role.ts. Also the `fleet` command line (COMMANDS below; `fleet help`).
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
import { createLogger, type Logger } from './core/logger.js';
import type { Plan } from './core/events.js';
import { PLANS, createCustomer, setCustomerRateLimit, setCustomerWebhookLimit } from './core/commands/customers.js';
import { CommandRejected } from './core/commands/rejection.js';
import { ensureDemoCustomer, type DataDirDemo } from './core/demo-customer.js';
import { generatePassword } from './core/passwords.js';
import { limitHeapGrowthFromNowOn } from './core/heap-growth.js';
import type { RoleContext } from './core/role.js';
import { startRoleThread, threadEntry } from './core/role-thread.js';
import { SecretBox } from './core/secret-box.js';
import { nameThisThread } from './core/thread-name.js';
import { startGateway, type GatewayRole } from './gateway/role.js';
import { historyItemEncoderModule } from './api/history-item-module.js';
import type { ApiRole } from './api/role.js';
import type { ProjectionRunner } from './projections/index.js';
import { startProjections } from './projections/role.js';
import { startWebhooks, type WebhooksRole } from './projections/webhooks/role.js';

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
