/** The operator's customer commands: each opens the configured store, runs a core command and closes it. */
import { systemClock } from '../core/clock.js';
import { ConfigError, loadConfig } from '../core/config.js';
import { PLANS, createCustomer, setCustomerRateLimit, setCustomerWebhookLimit } from '../core/commands/customers.js';
import { CommandRejected } from '../core/commands/rejection.js';
import { openEventStore } from '../core/event-store/open.js';
import type { EventStore } from '../core/event-store/port.js';
import type { Plan } from '../core/events.js';
import { generatePassword } from '../core/passwords.js';
import type { Command } from './index.js';

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

export const CUSTOMER_COMMANDS: readonly Command[] = [
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
