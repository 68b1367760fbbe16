/**
 * Logins of registered devices that are refused for who they claim to be (today: a
 * protocol other than the one the device is bound to), recorded in the device stream as
 * `DeviceLoginRefused` for operators, within the same limits as unknown devices: one
 * event per device per interval, and the shared token bucket.
 */
import type { Clock } from '../core/clock.js';
import type { DeviceClaim, DeviceProtocol } from '../core/events.js';
import type { EventStore } from '../core/event-store/port.js';
import { randomUuid } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { streams } from '../core/streams.js';
import { appendFailureLevel } from '../core/event-store/write-health.js';
import type { KeyedThrottle } from './keyed-throttle.js';
import type { GatewayCounters } from './stats.js';

export class RefusedLoginLog {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly throttle: KeyedThrottle,
    private readonly stats: GatewayCounters,
  ) {}

  async protocolMismatch(claim: DeviceClaim, protocol: DeviceProtocol, bound: DeviceProtocol, remoteAddress: string): Promise<void> {
    const now = this.clock.now();
    const count = this.throttle.take(`login|${claim.device_id}`, now);
    if (count < 0) this.stats.deviceEventsSuppressed.login_refused += 1;
    if (count <= 0) return;
    try {
      await this.store.appendToStream(streams.device(claim.device_id), [
        {
          id: randomUuid(),
          type: 'DeviceLoginRefused',
          data: {
            device_id: claim.device_id,
            customer_id: claim.customer_id,
            reason: 'protocol_mismatch',
            protocol,
            bound_protocol: bound,
            remote_address: remoteAddress,
            at: now,
            count,
          },
        },
      ]);
    } catch (err) {
      this.log[appendFailureLevel(err, 'warn')]({ err, device: claim.device_id }, 'could not record a refused login');
    }
  }
}
