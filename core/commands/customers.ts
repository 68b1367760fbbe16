/** Customer (tenant) commands: create one with its first full-access API key, set an agreed rate limit. */
import type { Clock } from '../clock.js';
import { ALL_SCOPES, type ApiKeyCreated, type CustomerCreated, type Plan } from '../events.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { newId } from '../ids.js';
import { streams } from '../streams.js';
import { newApiKeyEvent } from './credentials.js';
import { type NewEvent, handle } from './handler.js';
import { CommandRejected } from './rejection.js';
import { type TenantState, checkCustomer, tenantStream } from './tenant.js';
import { prepareUser, writeUser } from './users.js';

export const PLANS: readonly Plan[] = ['free', 'pro', 'enterprise'];

export interface CreatedCustomer {
  customer_id: string;
  api_key: string;
  key_id: string;
  /** The first panel user, when one was asked for. */
  user: { user_id: string; email: string } | null;
  position: LogPosition;
}

/** The customer and its first key, together in one append. */
export function decideCreateCustomer(state: TenantState, customer: CustomerCreated['data'], key: ApiKeyCreated['data']): NewEvent[] {
  if (state.exists) throw new CommandRejected('conflict', 'already_exists', `customer ${customer.customer_id} already exists`);
  return [
    { type: 'CustomerCreated', data: customer },
    { type: 'ApiKeyCreated', data: key },
  ];
}

export async function createCustomer(
  store: EventStore,
  clock: Clock,
  /**
   * `speed_limit_kmh`: default overspeed threshold for the customer's devices (absent: none).
   * `first_user`: a panel login to create with it; its email is claimed before anything else
   * is written, so a taken email refuses the whole creation.
   */
  input: { name: string; plan: Plan; speed_limit_kmh?: number | null; first_user?: { email: string; name: string; password: string } },
): Promise<CreatedCustomer> {
  const now = clock.now();
  const customerId = newId('cus', now);
  const user = input.first_user ? await prepareUser(store, clock, { customer_id: customerId, ...input.first_user }) : null;
  const key = newApiKeyEvent(customerId, 'Default full-access key', [...ALL_SCOPES], now);
  const customer: CustomerCreated['data'] = {
    customer_id: customerId,
    name: input.name,
    plan: input.plan,
    speed_limit_kmh: input.speed_limit_kmh ?? null,
    created_at: now,
  };
  const { position } = await handle(store, {
    stream: streams.tenant(customerId),
    aggregate: tenantStream,
    decide: (state) => decideCreateCustomer(state, customer, key.event.data),
  });
  const created = { customer_id: customerId, api_key: key.secret, key_id: key.keyId };
  if (!user) return { ...created, user: null, position: position! };
  return { ...created, user: { user_id: user.user_id, email: user.email }, position: await writeUser(store, user) };
}

/** Request rates are whole requests: at least 1 a minute and a burst of at least 1. */
function isValidRateLimit(limit: { per_minute: number; burst: number }): boolean {
  return Number.isSafeInteger(limit.per_minute) && limit.per_minute >= 1 && Number.isSafeInteger(limit.burst) && limit.burst >= 1;
}

/** The limit is checked before the customer: a malformed one is refused whoever it is for. */
export function decideSetRateLimit(
  state: TenantState,
  command: { customer_id: string; limit: { per_minute: number; burst: number } | null },
  now: number,
): NewEvent[] {
  const { customer_id: customerId, limit } = command;
  if (limit && !isValidRateLimit(limit)) {
    throw new CommandRejected('invalid', 'validation_failed', 'per_minute and burst must be whole numbers of at least 1');
  }
  checkCustomer(state, customerId);
  return [{ type: 'CustomerRateLimitSet', data: { customer_id: customerId, per_minute: limit?.per_minute ?? null, burst: limit?.burst ?? null, set_at: now } }];
}

/** Sets a customer's agreed rate limit, or (null) returns it to its plan's. */
export async function setCustomerRateLimit(
  store: EventStore,
  clock: Clock,
  customerId: string,
  limit: { per_minute: number; burst: number } | null,
): Promise<LogPosition> {
  const now = clock.now();
  const command = { customer_id: customerId, limit };
  const { position } = await handle(store, { stream: streams.tenant(customerId), aggregate: tenantStream, decide: (state) => decideSetRateLimit(state, command, now) });
  return position!;
}

/** Highest agreed webhook rate: far above what one receiver takes, low enough to catch a typo. */
export const MAX_WEBHOOKS_PER_S = 100_000;

export function decideSetWebhookLimit(state: TenantState, command: { customer_id: string; per_s: number | null }, now: number): NewEvent[] {
  const { customer_id: customerId, per_s: perS } = command;
  if (perS !== null && !(Number.isSafeInteger(perS) && perS >= 1 && perS <= MAX_WEBHOOKS_PER_S)) {
    throw new CommandRejected('invalid', 'validation_failed', `webhook deliveries a second must be a whole number from 1 to ${MAX_WEBHOOKS_PER_S}`);
  }
  checkCustomer(state, customerId);
  return [{ type: 'CustomerWebhookLimitSet', data: { customer_id: customerId, per_s: perS, set_at: now } }];
}

/**
 * Sets a customer's agreed webhook deliveries a second (Enterprise plans are
 * "by agreement"), or (null) returns it to its plan's default.
 */
export async function setCustomerWebhookLimit(store: EventStore, clock: Clock, customerId: string, perS: number | null): Promise<LogPosition> {
  const now = clock.now();
  const command = { customer_id: customerId, per_s: perS };
  const { position } = await handle(store, { stream: streams.tenant(customerId), aggregate: tenantStream, decide: (state) => decideSetWebhookLimit(state, command, now) });
  return position!;
}
