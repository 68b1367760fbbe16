/** Counters the gateway keeps for logs, benchmarks and /metrics. */
import type { Rejection } from './connection-limits.js';

/** Why a connection was closed at accept: its listener was full, or the caps of connection-limits.ts. */
export type ConnectionRejection = Rejection | 'listener_cap';

export interface GatewayStats {
  connections: number;
  framesAccepted: number;
  framesRefused: number;
  recordsStored: number;
  bytesSkipped: number;
  unknownDeviceFrames: number;
  appendFailures: number;
  connectionsRejected: Record<ConnectionRejection, number>;
  /** Connections closed because they had not logged in by the deadline. */
  loginTimeouts: number;
  /** accept() failures reported by the listeners (EMFILE, ENFILE...). */
  acceptErrors: number;
  /** Refused input by protocol, then reason (a DecodeError code, `junk`, `unframeable`, `no_login`...). */
  refusals: Record<string, Record<string, number>>;
  /** Connections closed for a run of refused input (connection.ts MAX_REFUSED_IN_A_ROW). */
  closedForRefusals: number;
  /** JT/T 808 auth codes issued (registrations). */
  authCodesIssued: number;
  /** Operator events not written because the shared budget was spent, by kind (unknown_device, login_refused). */
  deviceEventsSuppressed: Record<'unknown_device' | 'login_refused', number>;
  /** Connections closed because a newer one of the same device logged in. */
  connectionsReplaced: number;
  /** DeviceConnected/DeviceDisconnected/DeviceConnectionReplaced events not written (quick redials, throttled replacements). */
  connectionEventsSuppressed: number;
  /** Connection-event writes that waited for the shared bucket. */
  connectionEventsDeferred: number;
}

export function newStats(): GatewayStats {
  return {
    connections: 0,
    framesAccepted: 0,
    framesRefused: 0,
    recordsStored: 0,
    bytesSkipped: 0,
    unknownDeviceFrames: 0,
    appendFailures: 0,
    connectionsRejected: { listener_cap: 0, total_cap: 0, address_cap: 0, address_backoff: 0 },
    loginTimeouts: 0,
    acceptErrors: 0,
    refusals: {},
    closedForRefusals: 0,
    authCodesIssued: 0,
    deviceEventsSuppressed: { unknown_device: 0, login_refused: 0 },
    connectionsReplaced: 0,
    connectionEventsSuppressed: 0,
    connectionEventsDeferred: 0,
  };
}
