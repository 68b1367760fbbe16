/**
 * The gateway's counters, in the one shape the gateway keeps them (gateway/stats.ts), its thread
 * posts them (gateway/thread-messages.ts) and /metrics reads them (api/metrics.ts). Here in core/
 * because the API may not import the gateway.
 */

/** Why a connection was closed at accept: its listener was full, or a cap of gateway/connection-limits.ts. */
export type ConnectionRejection = 'listener_cap' | 'total_cap' | 'address_cap' | 'address_backoff';

export interface GatewayCounters {
  /** Connections accepted. */
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
  /** Connections closed for a run of refused input (gateway/connection.ts MAX_REFUSED_IN_A_ROW). */
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

/** A gateway as /metrics reads it: its counters and the connections open now. */
export interface GatewayReading {
  stats: GatewayCounters;
  openConnections: number;
}
