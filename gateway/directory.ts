/**
 * Which registered device a connection belongs to. A login reads one claim
 * stream (`imei-…` or `terminal-…`) and the device's first event; answers are cached, unknown ones only
 * briefly so a device registered a moment ago is let in on its next try.
 */
import type { Clock } from '../core/clock.js';
import type { DeviceClaim } from '../core/events.js';
import type { EventStore } from '../core/event-store/port.js';
import { streams } from '../core/streams.js';
import type { DeviceIdentity } from './protocol.js';

const UNKNOWN_TTL_MS = 5_000;

export class DeviceDirectory {
  private readonly known = new Map<string, DeviceClaim>();
  private readonly unknownUntil = new Map<string, number>();

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  /** The identifiers to try, most specific first (docs/api-decisions.md, Devices: terminal id, else the IMEI digits). */
  static candidates(identity: DeviceIdentity): string[] {
    const out: string[] = [];
    if (identity.terminalId) out.push(streams.terminal(identity.terminalId));
    if (identity.imei) out.push(streams.imei(identity.imei));
    if (identity.terminalId && /^\d{15}$/.test(identity.terminalId) && identity.terminalId !== identity.imei) {
      out.push(streams.imei(identity.terminalId));
    }
    return out;
  }

  async resolve(identity: DeviceIdentity): Promise<DeviceClaim | null> {
    for (const stream of DeviceDirectory.candidates(identity)) {
      const claim = await this.lookup(stream);
      if (claim) return claim;
    }
    return null;
  }

  private async lookup(stream: string): Promise<DeviceClaim | null> {
    const cached = this.known.get(stream);
    if (cached) return cached;
    const until = this.unknownUntil.get(stream);
    const now = this.clock.now();
    if (until !== undefined && until > now) return null;
    const claim = await this.liveClaim(stream);
    if (claim) {
      this.known.set(stream, claim);
      this.unknownUntil.delete(stream);
      return claim;
    }
    if (this.unknownUntil.size > 100_000) this.unknownUntil.clear(); // bounded memory under IMEI scans
    this.unknownUntil.set(stream, now + UNKNOWN_TTL_MS);
    return null;
  }

  /**
   * The claim the stream's last event holds, if its device was registered: a
   * released claim, or one whose registration never completed, binds nothing.
   */
  private async liveClaim(stream: string): Promise<DeviceClaim | null> {
    const [last] = await this.store.readStream(stream, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
    if (last?.type !== 'ImeiClaimed' && last?.type !== 'TerminalClaimed') return null;
    const [registered] = await this.store.readStream(streams.device(last.data.device_id), { maxCount: 1 });
    return registered?.type === 'DeviceRegistered' ? last.data : null;
  }
}

/** A printable name for an unidentified device, for logs and the unknown-devices list. */
export function identityLabel(identity: DeviceIdentity): string {
  return identity.imei ?? identity.terminalId ?? 'unknown';
}
