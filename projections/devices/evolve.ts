/** Pure rules for a device's read-model row. */
import { assertNever, type DomainEvent } from '../../core/events.js';
import { isCommandAreaEvent } from '../../core/events/commands.js';

export type DeviceStatus = 'never_connected' | 'online' | 'offline';

export interface DeviceRow {
  device_id: string;
  customer_id: string;
  imei: string;
  model: string;
  name: string | null;
  group_id: string | null;
  driver_id: string | null;
  terminal_id: string | null;
  /** Overspeed threshold of this device; null falls back to the customer's. */
  speed_limit_kmh: number | null;
  /** The device's own engine stop/resume texts as JSON (core/command-types.ts CommandTexts); null: the protocol's defaults. */
  command_texts: string | null;
  status: DeviceStatus;
  protocol: string | null;
  connection_id: string | null;
  last_seen_at: number | null;
  created_at: number;
  updated_at: number;
}

/**
 * The row seen later, as every report makes it. Every field is spelled out: `{ ...row, last_seen_at }`
 * took V8's slow paths (a copy, then a runtime call for the field defined over it), a share of a
 * rebuild's read models' thread (docs/performance.md).
 */
function seenAt(row: DeviceRow, at: number): DeviceRow {
  return {
    device_id: row.device_id,
    customer_id: row.customer_id,
    imei: row.imei,
    model: row.model,
    name: row.name,
    group_id: row.group_id,
    driver_id: row.driver_id,
    terminal_id: row.terminal_id,
    speed_limit_kmh: row.speed_limit_kmh,
    command_texts: row.command_texts,
    status: row.status,
    protocol: row.protocol,
    connection_id: row.connection_id,
    last_seen_at: at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The next row, or the same row when the event does not change it. */
export function evolveDevice(row: DeviceRow | null, e: DomainEvent): DeviceRow | null {
  // Commands have a read model of their own (projections/commands).
  if (isCommandAreaEvent(e)) return row;
  switch (e.type) {
    case 'DeviceRegistered':
      return {
        device_id: e.data.device_id,
        customer_id: e.data.customer_id,
        imei: e.data.imei,
        model: e.data.model,
        name: e.data.name,
        group_id: e.data.group_id,
        driver_id: e.data.driver_id,
        terminal_id: e.data.terminal_id,
        speed_limit_kmh: e.data.speed_limit_kmh ?? null,
        command_texts: null,
        status: 'never_connected',
        protocol: e.data.protocol ?? null,
        connection_id: null,
        last_seen_at: null,
        created_at: e.data.created_at,
        updated_at: e.data.created_at,
      };
    case 'DeviceUpdated': {
      if (!row) return row;
      const { command_texts: texts, ...changes } = e.data.changes;
      const next = { ...row, ...changes, updated_at: e.data.updated_at };
      return texts === undefined ? next : { ...next, command_texts: texts ? JSON.stringify(texts) : null };
    }
    case 'DeviceConnected':
      if (!row) return row;
      return {
        ...row,
        status: 'online',
        protocol: e.data.protocol,
        connection_id: e.data.connection_id,
        last_seen_at: Math.max(row.last_seen_at ?? 0, e.data.at),
      };
    case 'DeviceDisconnected':
      // Only the current connection going away makes the device offline.
      if (!row || row.connection_id !== e.data.connection_id) return row;
      return {
        ...row,
        status: 'offline',
        connection_id: null,
        last_seen_at: Math.max(row.last_seen_at ?? 0, e.data.last_seen_at),
      };
    case 'PositionRecorded':
    case 'StatusReported':
    case 'AlarmReported':
      if (!row) return row;
      return e.data.received_at > (row.last_seen_at ?? 0) ? seenAt(row, e.data.received_at) : row;
    // Kept in the device stream for the gateway and for operators; they change no field of the row.
    case 'TerminalAuthCodeIssued':
    case 'DeviceProtocolBound':
    case 'DeviceLoginRefused':
    case 'DeviceConnectionReplaced':
    case 'CustomerCreated':
    case 'CustomerRateLimitSet':
    case 'ApiKeyCreated':
    case 'ApiKeyRevoked':
    case 'ApiKeysUsed':
    case 'OAuthClientCreated':
    case 'OAuthClientDeleted':
    case 'OAuthTokenIssued':
    case 'GeofenceCreated':
    case 'GeofenceUpdated':
    case 'GeofenceDeleted':
    case 'DriverCreated':
    case 'ImeiClaimed':
    case 'TerminalClaimed':
    case 'CustomerWebhookLimitSet':
    case 'ImeiReleased':
    case 'TerminalReleased':
    case 'DriverExternalIdClaimed':
    case 'DeviceEventRaised':
    case 'UnknownDeviceSeen':
    case 'CustomerUserCreated':
    case 'UserEmailClaimed':
    case 'SessionStarted':
    case 'SessionEnded':
    case 'WebhookEndpointCreated':
    case 'WebhookEndpointUpdated':
    case 'WebhookSecretRotated':
    case 'WebhookEndpointDisabled':
    case 'WebhookEndpointDeleted':
    case 'WebhookRedeliveryRequested':
    case 'WebhookReplayRequested':
    case 'TripRulesSet':
    case 'AccumulatorsSet':
      return row;
    default:
      return assertNever(e);
  }
}
