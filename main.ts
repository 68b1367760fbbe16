#!/usr/bin/env node
/**
 * Composition root: reads the configuration, opens the store and starts the
 * roles asked for (gateway, projections, api; all by default, one process on
 * the embedded store). Also the `fleet` command line:
 *
 *   fleet [start] [--roles gateway,projections,api]
 *   fleet customer create --name NAME --plan free|pro|enterprise [--speed-limit-kmh N] [--json]
 *   fleet customer set-rate-limit --customer ID (--per-minute N --burst N | --plan-default)
 */
import { readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ReadModels } from './api/read-models.js';
import { buildApp } from './api/app.js';
import { listen, stopApi } from './api/server.js';
import { systemClock } from './core/clock.js';
import { ALL_ROLES, ConfigError, loadConfig, type Config, type Role } from './core/config.js';
import { countAppends } from './core/event-store/counting.js';
import { openEventStore } from './core/event-store/open.js';
import type { EventStore } from './core/event-store/port.js';
import type { Plan } from './core/events.js';
import { createLogger, type Logger } from './core/logger.js';
import { PLANS, createCustomer, setCustomerRateLimit } from './core/commands/customers.js';
import { CommandRejected } from './core/commands/rejection.js';
import { SecretBox } from './core/secret-box.js';
import { protocols } from './gateway/protocols/index.js';
import { Gateway } from './gateway/server.js';
import { ProjectionRunner, openReadModelDb, readModelProjections } from './projections/index.js';
import { runnerView } from './projections/view.js';

export interface RunningPlatform {
  ports: { http: number | null; teltonika: number | null; gt06: number | null; jt808: number | null };
  store: EventStore;
  gateway: Gateway | null;
  runner: ProjectionRunner | null;
  stop(): Promise<void>;
}

/** Starts the asked roles; resolves once every listener is up. */
export async function startPlatform(config: Config, roles: readonly Role[], log: Logger): Promise<RunningPlatform> {
  const clock = systemClock;
  // Every role appends through the counted store, so /metrics sees the process's appends.
  const { store, counts: appendCounts } = countAppends(await openEventStore(config.store, clock));
  let runner: ProjectionRunner | null = null;
  let gateway: Gateway | null = null;
  let app: Awaited<ReturnType<typeof buildApp>> | null = null;
  const ports: RunningPlatform['ports'] = { http: null, teltonika: null, gt06: null, jt808: null };

  if (roles.includes('projections') || roles.includes('api')) {
    // The API serves from read models this process keeps up to date.
    const db = openReadModelDb(join(config.dataDir, 'readmodels.sqlite'));
    runner = new ProjectionRunner(store, db, readModelProjections, log.child({ role: 'projections' }));
    await runner.start();
    if (roles.includes('api')) {
      const r = runner;
      app = await buildApp(
        {
          store,
          clock,
          readModels: new ReadModels(db),
          // After the read-model database: opening it created the data directory, beside which the key file lives.
          secretBox: SecretBox.load(config.secretKey),
          waitFor: (p) => r.waitFor(p),
          catchUp: () => r.catchUp(),
          projections: runnerView(r, store, clock),
          settings: { publicUrl: config.publicUrl, allowPrivateWebhookUrls: config.allowPrivateWebhookUrls },
          metrics: {
            storeAppends: () => appendCounts,
            // The gateway starts after the API (below); until then, and without that role, there is nothing to report.
            ...(roles.includes('gateway')
              ? {
                  gateway: () => {
                    const s = gateway?.stats;
                    return {
                      framesAccepted: s?.framesAccepted ?? 0,
                      framesRefused: s?.framesRefused ?? 0,
                      recordsStored: s?.recordsStored ?? 0,
                      connectionsAccepted: s?.connections ?? 0,
                      openConnections: gateway?.openConnections ?? 0,
                      connectionsRejected: { ...s?.connectionsRejected },
                      loginTimeouts: s?.loginTimeouts ?? 0,
                      acceptErrors: s?.acceptErrors ?? 0,
                      refusals: s?.refusals ?? {},
                      closedForRefusals: s?.closedForRefusals ?? 0,
                    };
                  },
                }
              : {}),
          },
        },
        log.child({ role: 'api' }),
      );
      ports.http = await listen(app, config.httpHost, config.httpPort);
    }
  }
  if (roles.includes('gateway')) {
    gateway = new Gateway({
      store,
      clock,
      log: log.child({ role: 'gateway' }),
      host: config.gatewayHost,
      listeners: [
        { protocol: protocols.teltonika, port: config.teltonikaPort },
        { protocol: protocols.gt06, port: config.gt06Port },
        { protocol: protocols.jt808, port: config.jt808Port },
      ],
      offlineAfterS: config.offlineAfterS,
      loginTimeoutS: config.loginTimeoutS,
      maxConnections: config.maxConnections,
      maxTotalConnections: config.maxTotalConnections,
      maxConnectionsPerAddress: config.maxConnectionsPerAddress,
      maxQueuedFrames: config.maxQueuedFrames,
    });
    const bound = await gateway.start();
    ports.teltonika = bound.teltonika;
    ports.gt06 = bound.gt06;
    ports.jt808 = bound.jt808;
  }
  return {
    ports,
    store,
    gateway,
    runner,
    async stop() {
      // Devices first (their last acks need the store), then the API, then the log.
      await gateway?.stop();
      if (app) await stopApi(app);
      await runner?.stop();
      await store.close();
    },
  };
}

/**
 * On a fresh data dir, creates a demo customer and keeps its key in a 0600
 * file. The key is printed on that first start only: later starts name the
 * file, so the key does not land in every log that captures stdout.
 */
async function ensureDemoCustomer(config: Config, store: EventStore): Promise<{ customer_id: string; api_key: string; file: string; createdNow: boolean }> {
  const file = join(config.dataDir, 'demo-customer.json');
  if (existsSync(file)) return { ...(JSON.parse(readFileSync(file, 'utf8')) as { customer_id: string; api_key: string }), file, createdNow: false };
  const created = await createCustomer(store, systemClock, { name: 'Demo Fleet', plan: 'pro' });
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const demo = { customer_id: created.customer_id, api_key: created.api_key };
  writeFileSync(file, JSON.stringify(demo, null, 2) + '\n', { mode: 0o600 });
  return { ...demo, file, createdNow: true };
}

async function commandStart(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { roles: { type: 'string' } } });
  const config = loadConfig();
  const roles = parseRoles(values.roles);
  const log = createLogger(config.logLevel);
  const platform = await startPlatform(config, roles, log);
  const demo = roles.includes('api') && config.store.startsWith('sqlite:') ? await ensureDemoCustomer(config, platform.store) : null;
  const lines = [
    '',
    'Fleet platform is running',
    `  store:       ${config.store}`,
    platform.ports.http !== null ? `  REST API:    http://localhost:${platform.ports.http}/v1  (health: /healthz)` : null,
    platform.ports.teltonika !== null ? `  Teltonika:   tcp://localhost:${platform.ports.teltonika}` : null,
    platform.ports.gt06 !== null ? `  GT06:        tcp://localhost:${platform.ports.gt06}` : null,
    platform.ports.jt808 !== null ? `  JT/T 808:    tcp://localhost:${platform.ports.jt808}` : null,
    demo ? `  Demo customer ${demo.customer_id}` : null,
    demo?.createdNow ? `  Log in with:  Authorization: Bearer ${demo.api_key}  (shown on this first start only; kept in ${demo.file})` : null,
    demo?.createdNow
      ? `  Try:          curl -H "Authorization: Bearer ${demo.api_key}" http://localhost:${platform.ports.http}/v1/positions/latest`
      : null,
    demo && !demo.createdNow ? `  Log in with the demo API key kept in ${demo.file} (readable by you only)` : null,
    '',
  ].filter((l): l is string => l !== null);
  process.stdout.write(lines.join('\n') + '\n');
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    await platform.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

async function commandCustomerCreate(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      plan: { type: 'string', default: 'free' },
      'speed-limit-kmh': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (!values.name) throw new ConfigError('customer create needs --name NAME');
  if (!PLANS.includes(values.plan as Plan)) throw new ConfigError(`--plan must be one of ${PLANS.join(', ')}`);
  const rawLimit = values['speed-limit-kmh'];
  const speedLimit = rawLimit === undefined ? null : Number(rawLimit);
  if (speedLimit !== null && !(speedLimit >= 1 && speedLimit <= 300)) throw new ConfigError('--speed-limit-kmh must be a number from 1 to 300');
  const config = loadConfig();
  const store = await openEventStore(config.store, systemClock);
  try {
    const created = await createCustomer(store, systemClock, { name: values.name, plan: values.plan as Plan, speed_limit_kmh: speedLimit });
    const out = { customer_id: created.customer_id, api_key: created.api_key };
    process.stdout.write(
      values.json ? JSON.stringify(out) + '\n' : `customer ${out.customer_id}\napi key  ${out.api_key}  (shown once: keep it)\n`,
    );
  } finally {
    await store.close();
  }
}

/** An Enterprise agreement: the customer's own request rate, or back to its plan's with --plan-default. */
async function commandCustomerSetRateLimit(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      customer: { type: 'string' },
      'per-minute': { type: 'string' },
      burst: { type: 'string' },
      'plan-default': { type: 'boolean', default: false },
    },
  });
  if (!values.customer) throw new ConfigError('customer set-rate-limit needs --customer ID');
  const given = values['per-minute'] !== undefined || values.burst !== undefined;
  if (given === values['plan-default']) throw new ConfigError('give either --per-minute N --burst N, or --plan-default');
  const limit = given ? { per_minute: Number(values['per-minute']), burst: Number(values.burst) } : null;
  const config = loadConfig();
  const store = await openEventStore(config.store, systemClock);
  try {
    await setCustomerRateLimit(store, systemClock, values.customer, limit);
    process.stdout.write(
      limit
        ? `customer ${values.customer}: ${limit.per_minute} requests a minute, bursts of ${limit.burst}\n`
        : `customer ${values.customer}: its plan's rate limit\n`,
    );
  } catch (err) {
    if (err instanceof CommandRejected) {
      throw new ConfigError(err.kind === 'not_found' ? `no customer ${values.customer}` : '--per-minute and --burst must both be whole numbers of at least 1');
    }
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

const USAGE = `usage:
  fleet [start] [--roles gateway,projections,api]
  fleet customer create --name NAME --plan free|pro|enterprise [--speed-limit-kmh N] [--json]
  fleet customer set-rate-limit --customer ID (--per-minute N --burst N | --plan-default)
`;

export async function cli(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
  if (command === undefined || command === 'start' || command.startsWith('--')) {
    return commandStart(command === 'start' ? argv.slice(1) : argv);
  }
  if (command === 'customer' && sub === 'create') return commandCustomerCreate(rest);
  if (command === 'customer' && sub === 'set-rate-limit') return commandCustomerSetRateLimit(rest);
  process.stderr.write(USAGE);
  process.exitCode = 2;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly || process.env.FLEET_CLI === '1') {
  cli(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  });
}
