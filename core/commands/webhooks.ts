/**
 * Webhook endpoint commands: create, edit, delete, rotate the signing secret.
 * The secret is generated here, returned to the caller once and stored only
 * sealed (SecretBox). The endpoint is loaded from its own stream
 * (`webhook-{id}`), which also carries the delivery engine's events
 * (disabled by the platform, redelivery and replay requests): appends use
 * the revision they decided on and decide again when another event got in.
 *
 * What makes an endpoint valid is core/webhook-endpoint.ts's; what the
 * deployment decides (the server's SecretBox, whether private addresses may
 * receive) comes in as `WebhookSettings`.
 */
import type { Clock } from '../clock.js';
import type { WebhookEndpointCreated, WebhookEndpointUpdated } from '../events.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { newId } from '../ids.js';
import { streams } from '../streams.js';
import type { SecretBox } from '../secret-box.js';
import { evolveWebhookEndpoint, generateWebhookSecret, isKindPattern, webhookUrlProblem, type WebhookEndpointRow } from '../webhook-endpoint.js';
import { type Aggregate, type NewEvent, handle, load } from './handler.js';
import { CommandRejected } from './rejection.js';

export interface WebhookSettings {
  /** Seals secrets for storage. */
  box: Pick<SecretBox, 'seal'>;
  /** FLEET_WEBHOOK_ALLOW_PRIVATE: private addresses and plain http may receive (development). */
  allowPrivate: boolean;
}

export const MAX_EVENT_PATTERNS = 50;
export const MAX_DEVICE_IDS = 1000;
export const MAX_DESCRIPTION_LENGTH = 500;
export const DEFAULT_GRACE_PERIOD_S = 86_400;
export const MAX_GRACE_PERIOD_S = 7 * 86_400;

/** The editable fields; `device_ids: null` is every device of the customer. */
export interface WebhookFields {
  url: string;
  events: string[];
  device_ids: string[] | null;
  description: string | null;
  enabled: boolean;
}

export type WebhookChanges = Partial<WebhookFields>;

/** An endpoint as its stream says it is now. */
export interface WebhookState extends WebhookFields {
  webhook_id: string;
  customer_id: string;
  /** Disabled by the platform (410, failing for days): a customer's `enabled: true` lifts it. */
  disabled_by_platform: boolean;
}

/** The endpoint rule the read model uses (core/webhook-endpoint.ts), folded over the endpoint's stream. */
export const webhookStream: Aggregate<WebhookEndpointRow | null> = {
  initial: null,
  evolve: (row, event) => evolveWebhookEndpoint(row, event),
};

/** Another customer's, a deleted or an unknown endpoint is not found (the same answer for all three). */
export function checkWebhook(row: WebhookEndpointRow | null, customerId: string, webhookId: string): WebhookState {
  if (!row || row.customer_id !== customerId) throw new CommandRejected('not_found', 'not_found', `webhook ${webhookId} does not exist`);
  return {
    webhook_id: row.webhook_id,
    customer_id: row.customer_id,
    url: row.url,
    events: row.events,
    device_ids: row.device_ids,
    description: row.description,
    enabled: row.enabled,
    disabled_by_platform: row.disabled_reason !== null,
  };
}

/** The endpoint's current state from its stream, or the not-found refusal. */
export async function loadWebhook(store: EventStore, customerId: string, webhookId: string): Promise<WebhookState> {
  return checkWebhook((await load(store, streams.webhook(webhookId), webhookStream)).state, customerId, webhookId);
}

/** Runs a decision on the endpoint's stream; another event getting in first (a redelivery request, the platform disabling it) makes it decide again. */
export function onWebhook(store: EventStore, webhookId: string, decide: (row: WebhookEndpointRow | null) => NewEvent[]) {
  return handle(store, { stream: streams.webhook(webhookId), aggregate: webhookStream, decide });
}

export type CreateWebhookInput = { customer_id: string } & Pick<WebhookFields, 'url' | 'events'> & Partial<Omit<WebhookFields, 'url' | 'events'>>;

export function decideCreateWebhook(row: WebhookEndpointRow | null, created: WebhookEndpointCreated['data']): NewEvent[] {
  if (row) throw new CommandRejected('conflict', 'already_exists', `webhook ${created.webhook_id} already exists`);
  return [{ type: 'WebhookEndpointCreated', data: created }];
}

export async function createWebhook(
  store: EventStore,
  clock: Clock,
  settings: WebhookSettings,
  input: CreateWebhookInput,
): Promise<{ webhook_id: string; secret: string; position: LogPosition }> {
  const fields = await checkFields(store, settings, input.customer_id, {
    url: input.url,
    events: input.events,
    device_ids: input.device_ids ?? null,
    description: input.description ?? null,
    enabled: input.enabled ?? true,
  });
  const now = clock.now();
  const webhookId = newId('whk', now);
  const secret = generateWebhookSecret();
  const created: WebhookEndpointCreated['data'] = {
    webhook_id: webhookId,
    customer_id: input.customer_id,
    url: fields.url!,
    events: fields.events!,
    device_ids: fields.device_ids ?? null,
    description: fields.description ?? null,
    enabled: fields.enabled ?? true,
    secret_ciphertext: settings.box.seal(secret),
    created_at: now,
  };
  const { position } = await onWebhook(store, webhookId, (row) => decideCreateWebhook(row, created));
  return { webhook_id: webhookId, secret, position: position! };
}

/**
 * Only the fields that change are written. `enabled: true` on an endpoint the
 * platform disabled is a change: it is how the customer turns it back on.
 */
export function decideUpdateWebhook(
  row: WebhookEndpointRow | null,
  command: { customer_id: string; webhook_id: string; checked: WebhookChanges },
  now: number,
): NewEvent[] {
  const state = checkWebhook(row, command.customer_id, command.webhook_id);
  const changes: Partial<WebhookFields> = {};
  for (const field of ['url', 'events', 'device_ids', 'description', 'enabled'] as const) {
    const value = command.checked[field];
    if (value === undefined) continue;
    const same = field === 'enabled' ? value === state.enabled && !state.disabled_by_platform : sameValue(value, state[field]);
    if (!same) (changes as Record<string, unknown>)[field] = value;
  }
  if (Object.keys(changes).length === 0) return [];
  const data: WebhookEndpointUpdated['data'] = { webhook_id: state.webhook_id, customer_id: state.customer_id, ...changes, updated_at: now };
  return [{ type: 'WebhookEndpointUpdated', data }];
}

/** Merge-patches an endpoint (`null` clears `device_ids` and `description`); nothing changing returns null. */
export async function updateWebhook(
  store: EventStore,
  clock: Clock,
  settings: WebhookSettings,
  input: { customer_id: string; webhook_id: string; changes: WebhookChanges },
): Promise<LogPosition | null> {
  // Checked once, before any load: the rules do not depend on the endpoint.
  const checked = await checkFields(store, settings, input.customer_id, input.changes);
  const now = clock.now();
  const command = { customer_id: input.customer_id, webhook_id: input.webhook_id, checked };
  return (await onWebhook(store, input.webhook_id, (row) => decideUpdateWebhook(row, command, now))).position;
}

export function decideDeleteWebhook(row: WebhookEndpointRow | null, command: { customer_id: string; webhook_id: string }, now: number): NewEvent[] {
  const state = checkWebhook(row, command.customer_id, command.webhook_id);
  return [{ type: 'WebhookEndpointDeleted', data: { webhook_id: state.webhook_id, customer_id: state.customer_id, deleted_at: now } }];
}

/** Deletes an endpoint; it is not found from then on (a second delete too). */
export async function deleteWebhook(store: EventStore, clock: Clock, input: { customer_id: string; webhook_id: string }): Promise<LogPosition> {
  const now = clock.now();
  return (await onWebhook(store, input.webhook_id, (row) => decideDeleteWebhook(row, input, now))).position!;
}

/** `sealed`: the new secret as stored; the previous one signs until `grace_period_s` from now. */
export function decideRotateWebhookSecret(
  row: WebhookEndpointRow | null,
  command: { customer_id: string; webhook_id: string; sealed: string; grace_period_s: number },
  now: number,
): NewEvent[] {
  const state = checkWebhook(row, command.customer_id, command.webhook_id);
  return [
    {
      type: 'WebhookSecretRotated',
      data: { webhook_id: state.webhook_id, customer_id: state.customer_id, secret_ciphertext: command.sealed, previous_valid_until: now + command.grace_period_s * 1000, rotated_at: now },
    },
  ];
}

/**
 * Replaces the signing secret. The new one is returned once; the previous one
 * keeps signing (in `X-Service-Signature-Previous`) for `grace_period_s`
 * (default 24 h, at most 7 days, 0 ends it now) so receivers can switch over
 * without dropping deliveries.
 */
export async function rotateWebhookSecret(
  store: EventStore,
  clock: Clock,
  settings: WebhookSettings,
  input: { customer_id: string; webhook_id: string; grace_period_s?: number },
): Promise<{ secret: string; previous_valid_until: number; position: LogPosition }> {
  const grace = input.grace_period_s ?? DEFAULT_GRACE_PERIOD_S;
  if (!Number.isInteger(grace) || grace < 0 || grace > MAX_GRACE_PERIOD_S) {
    throw new CommandRejected('invalid', 'validation_failed', `grace_period_s must be a whole number of seconds from 0 to ${MAX_GRACE_PERIOD_S}.`, '/grace_period_s');
  }
  const secret = generateWebhookSecret();
  const command = { customer_id: input.customer_id, webhook_id: input.webhook_id, sealed: settings.box.seal(secret), grace_period_s: grace };
  const now = clock.now();
  const { position } = await onWebhook(store, input.webhook_id, (row) => decideRotateWebhookSecret(row, command, now));
  return { secret, previous_valid_until: now + grace * 1000, position: position! };
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const invalid = (detail: string, field: string) => new CommandRejected('invalid', 'validation_failed', detail, field);

/**
 * Validates the fields present in `fields` (absent ones are left alone) and
 * returns them normalised: duplicate patterns and device ids dropped, a blank
 * description cleared.
 */
async function checkFields(store: EventStore, settings: WebhookSettings, customerId: string, fields: WebhookChanges): Promise<WebhookChanges> {
  const out: WebhookChanges = {};
  if (fields.url !== undefined) {
    const problem = webhookUrlProblem(fields.url, settings);
    if (problem !== null) throw invalid(problem, '/url');
    out.url = fields.url;
  }
  if (fields.events !== undefined) {
    if (!Array.isArray(fields.events) || fields.events.length === 0) throw invalid('events must list at least one kind, prefix.* or *.', '/events');
    if (fields.events.length > MAX_EVENT_PATTERNS) throw invalid(`events takes at most ${MAX_EVENT_PATTERNS} patterns.`, '/events');
    fields.events.forEach((pattern, i) => {
      if (typeof pattern !== 'string' || !isKindPattern(pattern)) {
        throw invalid(`${JSON.stringify(pattern)} is not an event kind, a prefix.* matching one, or *.`, `/events/${i}`);
      }
    });
    out.events = [...new Set(fields.events)];
  }
  if (fields.device_ids !== undefined) {
    if (fields.device_ids !== null) {
      if (fields.device_ids.length === 0) throw invalid('device_ids must name at least one device; null means every device.', '/device_ids');
      if (fields.device_ids.length > MAX_DEVICE_IDS) throw invalid(`device_ids takes at most ${MAX_DEVICE_IDS} devices.`, '/device_ids');
      const unique = [...new Set(fields.device_ids)];
      for (const [i, deviceId] of fields.device_ids.entries()) {
        if (fields.device_ids.indexOf(deviceId) !== i) continue;
        if (!(await isCustomersDevice(store, customerId, deviceId))) throw invalid(`device ${deviceId} does not exist`, `/device_ids/${i}`);
      }
      out.device_ids = unique;
    } else {
      out.device_ids = null;
    }
  }
  if (fields.description !== undefined) {
    if (fields.description !== null && fields.description.length > MAX_DESCRIPTION_LENGTH) {
      throw invalid(`description is longer than ${MAX_DESCRIPTION_LENGTH} characters.`, '/description');
    }
    out.description = fields.description === null || fields.description.trim() === '' ? null : fields.description;
  }
  if (fields.enabled !== undefined) out.enabled = fields.enabled;
  return out;
}

/** Another customer's device is as unknown as a made-up id. */
async function isCustomersDevice(store: EventStore, customerId: string, deviceId: string): Promise<boolean> {
  const [registered] = await store.readStream(streams.device(deviceId), { maxCount: 1 });
  return registered?.type === 'DeviceRegistered' && registered.data.customer_id === customerId;
}
