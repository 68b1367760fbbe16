/**
 * A webhook endpoint's rules: what makes one valid (its URL, its event
 * patterns, its secret's form), which the endpoint commands apply for the API,
 * the CLI and tests alike, and its read-model row, what the management API
 * shows. The signing secret is never part of the row (sealed or not): only
 * when it was last rotated and until when the previous one still signs.
 */
import { randomBytes } from 'node:crypto';
import type { DomainEvent, WebhookEndpointCreated, WebhookEndpointDisabled } from './events.js';
import { parseKindPattern } from './webhook-kinds.js';
import { checkWebhookUrl } from './webhook-url.js';

export const SECRET_PREFIX = 'whsec_';

/** A fresh endpoint secret: `whsec_` + 32 random bytes, base64url. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** Why `url` may not receive webhooks (`allowPrivate`: the deployment's development setting), or null when it may. */
export function webhookUrlProblem(url: string, { allowPrivate }: { allowPrivate: boolean }): string | null {
  const check = checkWebhookUrl(url, { allowPrivate });
  return check.ok ? null : check.reason;
}

/** True when `pattern` is an exact kind, a `prefix.*` naming at least one kind, or `*`. */
export function isKindPattern(pattern: string): boolean {
  return parseKindPattern(pattern) !== null;
}

/** The configuration the endpoint was created with (as changed since), and what the platform did to it. */
export interface WebhookEndpointRow
  extends Pick<WebhookEndpointCreated['data'], 'webhook_id' | 'customer_id' | 'url' | 'events' | 'device_ids' | 'description' | 'enabled' | 'created_at'> {
  /** Set when the platform disabled the endpoint (410, failing for days); null when enabled or disabled by the customer. */
  disabled_reason: WebhookEndpointDisabled['data']['reason'] | null;
  disabled_detail: string | null;
  /** When it stopped receiving, whoever disabled it; null while enabled. */
  disabled_at: number | null;
  secret_rotated_at: number | null;
  previous_secret_valid_until: number | null;
  updated_at: number;
}

/**
 * The next row; null when the endpoint is gone (deleted, or never created);
 * the same row when the event does not change it.
 */
export function evolveWebhookEndpoint(row: WebhookEndpointRow | null, e: DomainEvent): WebhookEndpointRow | null {
  if (e.type === 'WebhookEndpointCreated') {
    const d = e.data;
    return {
      webhook_id: d.webhook_id,
      customer_id: d.customer_id,
      url: d.url,
      events: d.events,
      device_ids: d.device_ids,
      description: d.description,
      enabled: d.enabled,
      disabled_reason: null,
      disabled_detail: null,
      disabled_at: d.enabled ? null : d.created_at,
      secret_rotated_at: null,
      previous_secret_valid_until: null,
      created_at: d.created_at,
      updated_at: d.created_at,
    };
  }
  if (!row) return null;
  switch (e.type) {
    case 'WebhookEndpointUpdated': {
      const { webhook_id: _id, customer_id: _c, updated_at, ...changes } = e.data;
      const next: WebhookEndpointRow = { ...row, ...changes, updated_at };
      // The customer's own switch: turning it on lifts a platform disable, turning it off is no platform reason.
      if (changes.enabled === true) Object.assign(next, { disabled_reason: null, disabled_detail: null, disabled_at: null });
      if (changes.enabled === false) Object.assign(next, { disabled_reason: null, disabled_detail: null, disabled_at: row.enabled ? updated_at : row.disabled_at });
      return next;
    }
    case 'WebhookSecretRotated':
      return { ...row, secret_rotated_at: e.data.rotated_at, previous_secret_valid_until: e.data.previous_valid_until, updated_at: e.data.rotated_at };
    case 'WebhookEndpointDisabled':
      return {
        ...row,
        enabled: false,
        disabled_reason: e.data.reason,
        disabled_detail: e.data.detail,
        disabled_at: e.data.disabled_at,
        updated_at: e.data.disabled_at,
      };
    case 'WebhookEndpointDeleted':
      return null;
    default:
      return row;
  }
}
