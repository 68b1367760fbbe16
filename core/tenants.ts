/** Creating a customer (tenant) with its first full-access API key. */
import type { Clock } from './clock.js';
import { API_KEY_PREFIX, generateSecret, sha256Hex } from './credentials.js';
import { ALL_SCOPES, type Plan, type Scope } from './events.js';
import type { EventStore, LogPosition } from './event-store/port.js';
import { newId, randomUuid } from './ids.js';
import { streams } from './streams.js';

export const PLANS: readonly Plan[] = ['free', 'pro', 'enterprise'];

export interface CreatedCustomer {
  customer_id: string;
  api_key: string;
  key_id: string;
  position: LogPosition;
}

export async function createCustomer(
  store: EventStore,
  clock: Clock,
  /** `speed_limit_kmh`: default overspeed threshold for the customer's devices (absent: none). */
  input: { name: string; plan: Plan; speed_limit_kmh?: number | null },
): Promise<CreatedCustomer> {
  const now = clock.now();
  const customerId = newId('cus', now);
  const key = await newApiKeyEvent(customerId, 'Default full-access key', [...ALL_SCOPES], now);
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
  return { customer_id: customerId, api_key: key.secret, key_id: key.keyId, position: result.position };
}

export async function newApiKeyEvent(customerId: string, name: string, scopes: Scope[], now: number) {
  const secret = generateSecret(API_KEY_PREFIX);
  const keyId = newId('key', now);
  return {
    secret,
    keyId,
    event: {
      id: randomUuid(),
      type: 'ApiKeyCreated' as const,
      data: { customer_id: customerId, key_id: keyId, name, scopes, secret_sha256: sha256Hex(secret), created_at: now },
    },
  };
}
