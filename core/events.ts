/**
 * Every domain event, one discriminated union. Types are past tense; data is
 * JSON (snake_case, times as ms since epoch). Switches over `type` end in
 * `assertNever` so a new event cannot be forgotten.
 */

import type { CustomerUserCreated, UserEmailClaimed, SessionStarted, SessionEnded } from './events/users.js';
import type { TripRulesSet, AccumulatorsSet } from './events/reports.js';
import type { WebhookEndpointCreated, WebhookEndpointUpdated, WebhookSecretRotated, WebhookEndpointDisabled, WebhookEndpointDeleted, WebhookRedeliveryRequested, WebhookReplayRequested } from './events/webhooks.js';
import type { CommandIdempotencyKeyUsed, DeviceCommandEvent } from './events/commands.js';
import type { CommandTexts } from './command-types.js';

export type { CustomerUserCreated, UserEmailClaimed, SessionStarted, SessionEnded } from './events/users.js';
export type { TripRulesSet, AccumulatorsSet } from './events/reports.js';
export type { WebhookEndpointCreated, WebhookEndpointUpdated, WebhookSecretRotated, WebhookEndpointDisabled, WebhookEndpointDeleted, WebhookRedeliveryRequested, WebhookReplayRequested } from './events/webhooks.js';
export type {
  CommandIdempotencyKeyUsed,
  CommandResponse,
  CommandSnapshot,
  DeviceCommandAcknowledged,
  DeviceCommandCancelled,
  DeviceCommandEvent,
  DeviceCommandExpired,
  DeviceCommandFailed,
  DeviceCommandQueued,
  DeviceCommandRejected,
  DeviceCommandSent,
  DeviceCommandSucceeded,
} from './events/commands.js';

import type { CommandKind, DeviceAlarmKind, EventKind } from './alarms.js';

export type Plan = 'free' | 'pro' | 'enterprise';
export type Scope =
  | 'devices:read'
  | 'devices:write'
  | 'positions:read'
  | 'events:read'
  | 'geofences:read'
  | 'geofences:write'
  | 'drivers:read'
  | 'drivers:write'
  | 'webhooks:read'
  | 'webhooks:write'
  | 'commands:read'
  | 'commands:write'
  | 'api_keys:manage';

export const ALL_SCOPES: readonly Scope[] = [
  'devices:read',
  'devices:write',
  'positions:read',
  'events:read',
  'geofences:read',
  'geofences:write',
  'drivers:read',
  'drivers:write',
  'webhooks:read',
  'webhooks:write',
  'commands:read',
  'commands:write',
  'api_keys:manage',
];

export interface CustomerCreated {
  type: 'CustomerCreated';
  data: {
    customer_id: string;
    name: string;
    plan: Plan;
    /** Default overspeed threshold for the customer's devices; null: only devices with their own limit are checked. */
    speed_limit_kmh?: number | null;
    created_at: number;
  };
}

/**
 * An agreed request rate for one customer (Enterprise plans are "by
 * agreement"); both null returns the customer to its plan's limits.
 */
export interface CustomerRateLimitSet {
  type: 'CustomerRateLimitSet';
  data: { customer_id: string; per_minute: number | null; burst: number | null; set_at: number };
}

/**
 * An Enterprise customer's agreed webhook deliveries a second; null returns
 * it to the default for its plan.
 */
export interface CustomerWebhookLimitSet {
  type: 'CustomerWebhookLimitSet';
  data: { customer_id: string; per_s: number | null; set_at: number };
}

export interface ApiKeyCreated {
  type: 'ApiKeyCreated';
  data: {
    customer_id: string;
    key_id: string;
    name: string;
    scopes: Scope[];
    /** SHA-256 of the secret, hex; the secret itself is never stored. */
    secret_sha256: string;
    created_at: number;
  };
}

export interface ApiKeyRevoked {
  type: 'ApiKeyRevoked';
  data: { customer_id: string; key_id: string; revoked_at: number };
}

/**
 * When keys were last used, coalesced by the API (one event per tenant per
 * flush interval, not one per request), so `last_used_at` is accurate to
 * that interval and shared by every API node.
 */
export interface ApiKeysUsed {
  type: 'ApiKeysUsed';
  data: { customer_id: string; keys: Array<{ key_id: string; last_used_at: number }> };
}

/**
 * Claims an IMEI (stream `imei-{imei}`) or a JT/T 808 terminal number (stream
 * `terminal-{digits}`) so two tenants can never register the same unit. It
 * carries what the gateway needs to bind a connection, so a login costs one
 * stream read.
 */
export interface DeviceClaim {
  device_id: string;
  customer_id: string;
  imei: string;
  model: string;
  terminal_id: string | null;
  /** The only protocol the unit may log in with, when fixed at registration; else bound on its first connection. */
  protocol?: DeviceProtocol | null;
  claimed_at: number;
}

/** The tracker protocols the gateway speaks. */
export type DeviceProtocol = 'teltonika' | 'gt06' | 'jt808';

export interface ImeiClaimed {
  type: 'ImeiClaimed';
  data: DeviceClaim;
}

export interface TerminalClaimed {
  type: 'TerminalClaimed';
  data: DeviceClaim;
}

/**
 * Gives an IMEI or terminal claim back: a registration that could not take
 * all its claims releases the ones it took, so no identifier stays held by a
 * device that does not exist. The stream's last event says who holds it.
 */
export interface ImeiReleased {
  type: 'ImeiReleased';
  data: { device_id: string; imei: string; released_at: number };
}

export interface TerminalReleased {
  type: 'TerminalReleased';
  data: { device_id: string; terminal_id: string; released_at: number };
}

/** Claims a driver `external_id` inside one customer (stream `driver-external-id-…`), so every API node sees the same owner. */
export interface DriverExternalIdClaimed {
  type: 'DriverExternalIdClaimed';
  data: { customer_id: string; driver_id: string; external_id: string; claimed_at: number };
}

export interface DeviceRegistered {
  type: 'DeviceRegistered';
  data: {
    device_id: string;
    customer_id: string;
    imei: string;
    model: string;
    name: string | null;
    group_id: string | null;
    driver_id: string | null;
    terminal_id: string | null;
    /** Overspeed threshold for this device; null falls back to the customer's default. */
    speed_limit_kmh?: number | null;
    /** The only protocol the unit may log in with; null or absent: the one of its first connection. */
    protocol?: DeviceProtocol | null;
    created_at: number;
  };
}

export interface DeviceUpdated {
  type: 'DeviceUpdated';
  data: {
    device_id: string;
    customer_id: string;
    /** Only the fields that changed; null clears. */
    changes: {
      name?: string | null;
      group_id?: string | null;
      driver_id?: string | null;
      speed_limit_kmh?: number | null;
      /** Texts an engine stop/resume sends instead of the protocol's defaults (core/command-types.ts); null: the defaults. */
      command_texts?: CommandTexts | null;
    };
    updated_at: number;
  };
}

export interface DeviceConnected {
  type: 'DeviceConnected';
  data: {
    device_id: string;
    customer_id: string;
    /** Pairs this connection with its DeviceDisconnected, so a stale socket closing never hides a newer one. */
    connection_id: string;
    protocol: string;
    remote_address: string;
    at: number;
    /** The gateway node that wrote it (random per start), so other nodes know the device left them; absent in older events. */
    gateway_node?: string;
  };
}

export interface DeviceDisconnected {
  type: 'DeviceDisconnected';
  data: {
    device_id: string;
    customer_id: string;
    connection_id: string;
    /** `closed` by the device or network, `idle_timeout` after FLEET_OFFLINE_AFTER_S of silence, `refused`, `shutdown`. */
    reason: 'closed' | 'idle_timeout' | 'protocol_error' | 'shutdown' | 'replaced';
    last_seen_at: number;
    at: number;
  };
}

/**
 * A JT/T 808 terminal registered (0x0100) and was handed an auth code (0x8100). Only the
 * latest code of a device authenticates (0x0102), on any gateway node and after restarts.
 * The code itself is not kept: its SHA-256 is enough to check one.
 */
export interface TerminalAuthCodeIssued {
  type: 'TerminalAuthCodeIssued';
  data: { device_id: string; customer_id: string; auth_code_sha256: string; issued_at: number };
}

/** The protocol of a device's first connection, when its registration named none: the only one it may use from then on. */
export interface DeviceProtocolBound {
  type: 'DeviceProtocolBound';
  data: { device_id: string; customer_id: string; protocol: DeviceProtocol; bound_at: number };
}

/**
 * A login of a registered unit over a protocol it is not bound to: refused. Written at most
 * once a minute per device and within the gateway's global budget; `count` is how many
 * refusals this event stands for.
 */
export interface DeviceLoginRefused {
  type: 'DeviceLoginRefused';
  data: {
    device_id: string;
    customer_id: string;
    reason: 'protocol_mismatch';
    protocol: DeviceProtocol;
    bound_protocol: DeviceProtocol;
    remote_address: string;
    at: number;
    count: number;
  };
}

/** A second connection logged in for a connected device: the newest wins, the older socket is closed. */
export interface DeviceConnectionReplaced {
  type: 'DeviceConnectionReplaced';
  data: {
    device_id: string;
    customer_id: string;
    previous_connection_id: string;
    connection_id: string;
    previous_remote_address: string;
    remote_address: string;
    protocol: DeviceProtocol;
    replaced_at: number;
    /** Replacements this event stands for (at most one event per device per minute is written). */
    count: number;
  };
}

export interface PositionRecorded {
  type: 'PositionRecorded';
  data: {
    device_id: string;
    customer_id: string;
    protocol: string;
    fix_time: number;
    received_at: number;
    valid: boolean;
    lat: number;
    lng: number;
    speed_kmh: number | null;
    heading_deg: number | null;
    altitude_m: number | null;
    satellites: number | null;
    ignition: boolean | null;
    odometer_m: number | null;
    attributes: Record<string, number | string | boolean>;
  };
}

/** A status sample without a location (GT06 heartbeat with ignition, JT/T 808 report with no fix). */
export interface StatusReported {
  type: 'StatusReported';
  data: {
    device_id: string;
    customer_id: string;
    protocol: string;
    at: number;
    received_at: number;
    ignition: boolean | null;
    attributes: Record<string, number | string | boolean>;
  };
}

export interface AlarmReported {
  type: 'AlarmReported';
  data: {
    device_id: string;
    customer_id: string;
    protocol: string;
    kind: DeviceAlarmKind;
    occurred_at: number;
    received_at: number;
    level: number | null;
    /** Where the device was, when the frame said. */
    position: { lat: number; lng: number; speed_kmh: number | null; heading_deg: number | null } | null;
    details: Record<string, number | string>;
  };
}

export type Severity = 'info' | 'low' | 'medium' | 'high' | 'critical';

/**
 * One entry of `GET /v1/events` and of the webhook feed: a device-reported
 * alarm or something the server detected (harsh driving from speed changes,
 * overspeed, a geofence crossing). Written by projections to `events-{device}`
 * with a deterministic id (`event_id`), so a replay never duplicates it.
 */
export interface DeviceEventRaised {
  type: 'DeviceEventRaised';
  data: {
    /** `evt_…`, stable across replays. */
    event_id: string;
    kind: Exclude<EventKind, 'position.updated' | 'device.online' | 'device.offline' | CommandKind>;
    customer_id: string;
    device_id: string;
    driver_id: string | null;
    occurred_at: number;
    severity: Severity;
    source: 'device' | 'server';
    position: { lat: number; lng: number; speed_kmh: number | null; heading_deg: number | null; timestamp: number } | null;
    /** Kind-specific payload fields (docs/api-decisions.md: delta_kmh, duration_ms, limit_kmh, geofence_id, geofence_name, dwell_s, alarm_level, media_count, trip_*). */
    fields: Record<string, number | string | null>;
    /** Explains the detection: speeds before/after, thresholds, raw protocol fields. */
    context: Record<string, unknown>;
    media: Array<{ type: string; url?: string; label?: string }>;
  };
}

export interface OAuthClientCreated {
  type: 'OAuthClientCreated';
  data: { customer_id: string; client_id: string; name: string; scopes: Scope[]; secret_sha256: string; created_at: number };
}

export interface OAuthClientDeleted {
  type: 'OAuthClientDeleted';
  data: { customer_id: string; client_id: string; deleted_at: number };
}

/** An access token issued to an OAuth client; only its hash is kept. */
export interface OAuthTokenIssued {
  type: 'OAuthTokenIssued';
  data: { customer_id: string; client_id: string; token_sha256: string; scopes: Scope[]; issued_at: number; expires_at: number };
}

export interface GeofenceCreated {
  type: 'GeofenceCreated';
  data: {
    geofence_id: string;
    customer_id: string;
    name: string;
    shape: 'polygon' | 'circle';
    /** GeoJSON Polygon (for circles: the polygon approximating it, used for containment). */
    geometry: { type: 'Polygon'; coordinates: number[][][] };
    center: { lat: number; lng: number } | null;
    radius_m: number | null;
    /** Seconds inside before `geofence.dwell` is raised; absent in events stored before it existed. */
    dwell_s?: number | null;
    created_at: number;
  };
}

/** PATCH /v1/geofences/{id}: the dwell threshold set or cleared. */
export interface GeofenceUpdated {
  type: 'GeofenceUpdated';
  data: { geofence_id: string; customer_id: string; dwell_s: number | null; updated_at: number };
}

export interface GeofenceDeleted {
  type: 'GeofenceDeleted';
  data: { geofence_id: string; customer_id: string; deleted_at: number };
}

export interface DriverCreated {
  type: 'DriverCreated';
  data: { driver_id: string; customer_id: string; name: string; external_id: string | null; created_at: number };
}

/** A frame from an IMEI no customer registered: refused, kept for operators. */
export interface UnknownDeviceSeen {
  type: 'UnknownDeviceSeen';
  data: { identifier: string; protocol: string; remote_address: string; at: number; count: number };
}

export type DomainEvent =
  | CustomerCreated
  | CustomerRateLimitSet
  | CustomerWebhookLimitSet
  | ApiKeyCreated
  | ApiKeyRevoked
  | ApiKeysUsed
  | OAuthClientCreated
  | OAuthClientDeleted
  | OAuthTokenIssued
  | GeofenceCreated
  | GeofenceUpdated
  | GeofenceDeleted
  | DriverCreated
  | ImeiClaimed
  | TerminalClaimed
  | ImeiReleased
  | TerminalReleased
  | DriverExternalIdClaimed
  | DeviceRegistered
  | DeviceUpdated
  | DeviceConnected
  | DeviceDisconnected
  | TerminalAuthCodeIssued
  | DeviceProtocolBound
  | DeviceLoginRefused
  | DeviceConnectionReplaced
  | PositionRecorded
  | StatusReported
  | AlarmReported
  | DeviceEventRaised
  | UnknownDeviceSeen
  | CustomerUserCreated
  | UserEmailClaimed
  | SessionStarted
  | SessionEnded
  | WebhookEndpointCreated
  | WebhookEndpointUpdated
  | WebhookSecretRotated
  | WebhookEndpointDisabled
  | WebhookEndpointDeleted
  | WebhookRedeliveryRequested
  | WebhookReplayRequested
  | DeviceCommandEvent
  | CommandIdempotencyKeyUsed
  | TripRulesSet
  | AccumulatorsSet;

export function assertNever(x: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(x)}`);
}
