/**
 * Frames from devices no customer registered are refused, and recorded for
 * operators as `UnknownDeviceSeen`. Writes are throttled per identifier (a unit
 * retrying every second) and by a token bucket shared with every other
 * identifier (a scan of made-up IMEIs), so neither can flood the store.
 */
import type { Clock } from '../core/clock.js';
import type { EventStore } from '../core/event-store/port.js';
import { appendFailureLevel } from '../core/event-store/write-health.js';
import { contentUuid } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { streams } from '../core/streams.js';
import type { KeyedThrottle } from './keyed-throttle.js';
import type { GatewayCounters } from './stats.js';

export class UnknownDeviceLog {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly throttle: KeyedThrottle,
    private readonly stats: GatewayCounters,
  ) {}

  async record(identifier: string, protocol: string, remoteAddress: string): Promise<void> {
    const now = this.clock.now();
    const count = this.throttle.take(`unknown|${identifier}`, now);
    if (count < 0) this.stats.deviceEventsSuppressed.unknown_device += 1;
    if (count <= 0) return;
    try {
      await this.store.appendToStream(streams.unknownDevice(identifier), [
        {
          id: contentUuid('unknown-device', identifier, String(now)),
          type: 'UnknownDeviceSeen',
          data: { identifier, protocol, remote_address: remoteAddress, at: now, count },
        },
      ]);
    } catch (err) {
      this.log[appendFailureLevel(err, 'warn')]({ err, identifier }, 'could not record unknown device');
    }
  }
}
