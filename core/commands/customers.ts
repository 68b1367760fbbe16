/** Customer (tenant) commands: create one with its first full-access API key, set an agreed rate limit. */
import type { Clock } from '../clock.js';
import { ALL_SCOPES, type Plan } from '../events.js';
import type { EventStore, EventToAppend, LogPosition } from '../event-store/port.js';
import { WrongExpectedRevisionError } from '../event-store/port.js';
import { newId, randomUuid } from '../ids.js';
import { streams } from '../streams.js';
import { newApiKeyEvent } from './credentials.js';
import { CommandRejected } from './rejection.js';
import { prepareUser } from './users.js';

export const PLANS: readonly Plan[] = ['free', 'pro', 'enterprise'];

export interface CreatedCustomer {
  customer_id: string;
  api_key: string;
  key_id: string;
  /** The first panel user, when one was asked for. */
  user: { user_id: string; email: string } | null;
  position: LogPosition;
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
  const result = await store.appendToStream(
    streams.tenant(customerId),
    [
      {
        id: randomUuid(),
        type: 'CustomerCreated',
        data: {
          customer_id: customerId,
          name: input.name,
          plan: input.plan,
          speed_limit_kmh: input.speed_limit_kmh ?? null,
          created_at: now,
        },
      },
      key.event,
    ],
    { expectedRevision: 'no_stream' },
  );
  if (!user) return { customer_id: customerId, api_key: key.secret, key_id: key.keyId, user: null, position: result.position };
  const written = await store.appendToStream(user.stream, [user.event], { expectedRevision: 'no_stream' });
  return { customer_id: customerId, api_key: key.secret, key_id: key.keyId, user: { user_id: user.user_id, email: user.email }, position: written.position };
}

/** Request rates are whole requests: at least 1 a minute and a burst of at least 1. */
function isValidRateLimit(limit: { per_minute: number; burst: number }): boolean {
  return Number.isSafeInteger(limit.per_minute) && limit.per_minute >= 1 && Number.isSafeInteger(limit.burst) && limit.burst >= 1;
}

/**
 * Sets a customer's agreed rate limit, or (null) returns it to its plan's.
 * The customer must exist: the tenant stream is appended to only if it does.
 */
export async function setCustomerRateLimit(
  store: EventStore,
  clock: Clock,
  customerId: string,
  limit: { per_minute: number; burst: number } | null,
): Promise<LogPosition> {
  if (limit && !isValidRateLimit(limit)) {
    throw new CommandRejected('invalid', 'validation_failed', 'per_minute and burst must be whole numbers of at least 1');
  }
  return appendToCustomer(store, customerId, {
    id: randomUuid(),
    type: 'CustomerRateLimitSet',
    data: { customer_id: customerId, per_minute: limit?.per_minute ?? null, burst: limit?.burst ?? null, set_at: clock.now() },
  });
}

/** Appends to an existing customer's tenant stream; an unknown customer is not found. */
async function appendToCustomer(store: EventStore, customerId: string, event: EventToAppend): Promise<LogPosition> {
  try {
    return (await store.appendToStream(streams.tenant(customerId), [event], { expectedRevision: 'stream_exists' })).position;
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) throw new CommandRejected('not_found', 'not_found', `No customer ${customerId}.`);
    throw err;
  }
}

/** Highest agreed webhook rate: far above what one receiver takes, low enough to catch a typo. */
export const MAX_WEBHOOKS_PER_S = 100_000;

/**
 * Sets a customer's agreed webhook deliveries a second (Enterprise plans are
 * "by agreement"), or (null) returns it to its plan's default.
 */
export async function setCustomerWebhookLimit(store: EventStore, clock: Clock, customerId: string, perS: number | null): Promise<LogPosition> {
  if (perS !== null && !(Number.isSafeInteger(perS) && perS >= 1 && perS <= MAX_WEBHOOKS_PER_S)) {
    throw new CommandRejected('invalid', 'validation_failed', `webhook deliveries a second must be a whole number from 1 to ${MAX_WEBHOOKS_PER_S}`);
  }
  return appendToCustomer(store, customerId, {
    id: randomUuid(),
    type: 'CustomerWebhookLimitSet',
    data: { customer_id: customerId, per_s: perS, set_at: clock.now() },
  });
}
