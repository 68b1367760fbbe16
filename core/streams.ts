/** Stream names: one place, so writers and readers cannot drift apart. */
export const streams = {
  tenant: (customerId: string) => `tenant-${customerId}`,
  device: (deviceId: string) => `device-${deviceId}`,
  telemetry: (deviceId: string) => `telemetry-${deviceId}`,
  /** Derived events (alarms, detections, geofence crossings) of one device. */
  deviceEvents: (deviceId: string) => `events-${deviceId}`,
  geofence: (geofenceId: string) => `geofence-${geofenceId}`,
  driver: (driverId: string) => `driver-${driverId}`,
  imei: (imei: string) => `imei-${imei}`,
  terminal: (terminalId: string) => `terminal-${terminalId}`,
  /** Keyed by a digest: an external id is free text chosen by the customer. */
  driverExternalId: (customerId: string, digest: string) => `driver-external-id-${customerId}-${digest}`,
  /** A customer user's account and its sessions. */
  user: (userId: string) => `user-${userId}`,
  /** Keyed by a digest of the lowercased email, unique across the platform. */
  userEmail: (digest: string) => `user-email-${digest}`,
  unknownDevice: (identifier: string) => `unknown-${identifier}`,
  /** Configuration and requests (redeliver, replay) of one webhook endpoint. */
  webhook: (webhookId: string) => `webhook-${webhookId}`,
  /** Every event of one device's commands (queued, sent, replies, expiry, cancel). */
  commands: (deviceId: string) => `commands-${deviceId}`,
  /** A customer's Idempotency-Key for command requests, keyed by its digest. */
  commandKey: (customerId: string, digest: string) => `command-key-${customerId}-${digest}`,
} as const;
