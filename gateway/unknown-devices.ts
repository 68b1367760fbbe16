/**
 * Frames from devices no customer registered are refused, and recorded for
 * operators as `UnknownDeviceSeen`. Writes are throttled per identifier so a
 * unit retrying every second (or a scan of made-up IMEIs) cannot flood the log.
 */
import type { Clock } from '../core/clock.js';
import type { EventStore } from '../core/event-store/port.js';
import { contentUuid } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { streams } from '../core/streams.js';

const WRITE_EVERY_MS = 60_000;
const MAX_TRACKED = 10_000;

interface Tally {
  lastWrittenAt: number;
  unwritten: number;
}

export class UnknownDeviceLog {
  private readonly tallies = new Map<string, Tally>();

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  async record(identifier: string, protocol: string, remoteAddress: string): Promise<void> {
    const now = this.clock.now();
    let tally = this.tallies.get(identifier);
    if (!tally) {
      if (this.tallies.size >= MAX_TRACKED) this.tallies.clear();
      tally = { lastWrittenAt: -Infinity, unwritten: 0 };
      this.tallies.set(identifier, tally);
    }
    tally.unwritten += 1;
    if (now - tally.lastWrittenAt < WRITE_EVERY_MS) return;
    const count = tally.unwritten;
    tally.unwritten = 0;
    tally.lastWrittenAt = now;
    try {
      await this.store.appendToStream(streams.unknownDevice(identifier), [
        {
          id: contentUuid('unknown-device', identifier, String(now)),
          type: 'UnknownDeviceSeen',
          data: { identifier, protocol, remote_address: remoteAddress, at: now, count },
        },
      ]);
    } catch (err) {
      this.log.warn({ err, identifier }, 'could not record unknown device');
    }
  }
}
