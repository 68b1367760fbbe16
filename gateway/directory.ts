/**
 * Which registered device a connection belongs to. A login reads one claim
 * stream (`imei-…` or `terminal-…`) and the device's first event; answers are cached, unknown ones only
 * briefly so a device registered a moment ago is let in on its next try.
 * It also keeps what the device stream says about logging in: the JT/T 808
 * auth code last issued (a hash of it) and the protocol the device is bound
 * to. Both live in the store, so every gateway node and every restart agrees.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { DeviceClaim, DeviceProtocol } from '../core/events.js';
import type { EventStore, RecordedEvent } from '../core/event-store/port.js';
import { randomUuid } from '../core/ids.js';
import { streams } from '../core/streams.js';
import type { DeviceIdentity } from './protocol.js';

/** Events read per page when looking through a device stream. */
const PAGE = 64;
/** Device facts kept in memory; past this the map starts over (they are read again on demand). */
const MAX_CACHED_DEVICES = 200_000;

const UNKNOWN_TTL_MS = 5_000;

export class DeviceDirectory {
  private readonly known = new Map<string, DeviceClaim>();
  private readonly unknownUntil = new Map<string, number>();
  /** device id → SHA-256 (hex) of the latest auth code in its stream, as of stream revision `revision`. */
  private readonly authCodes = new Map<string, { hash: string | null; revision: bigint }>();
  /** device id → protocol it is bound to (a binding never changes, so it is cached for good). */
  private readonly bound = new Map<string, DeviceProtocol>();

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

  /** Records a new auth code for the device (it replaces every earlier one). */
  async issueAuthCode(claim: DeviceClaim, code: string, now: number): Promise<void> {
    await this.store.appendToStream(streams.device(claim.device_id), [
      {
        id: randomUuid(),
        type: 'TerminalAuthCodeIssued',
        data: { device_id: claim.device_id, customer_id: claim.customer_id, auth_code_sha256: sha256(code), issued_at: now },
      },
    ]);
  }

  /**
   * True when `code` is the latest one issued to the device. The cached code stands while the
   * device stream has not grown since it was read; otherwise the stream is read again, since
   * another node (or this one before a restart) may have issued a newer code.
   */
  async authCodeMatches(claim: DeviceClaim, code: string): Promise<boolean> {
    const stream = streams.device(claim.device_id);
    const [last] = await this.store.readStream(stream, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
    if (!last) return false;
    let known = this.authCodes.get(claim.device_id);
    if (known?.revision !== last.revision) {
      known = { hash: await this.latestAuthCode(stream, last.revision), revision: last.revision };
      this.remember(this.authCodes, claim.device_id, known);
    }
    return known.hash !== null && sameHex(known.hash, sha256(code));
  }

  private async latestAuthCode(stream: string, from: bigint): Promise<string | null> {
    for (let at = from; at >= 0n; at -= BigInt(PAGE)) {
      const page = await this.store.readStream(stream, { direction: 'backwards', fromRevision: at, maxCount: PAGE });
      for (const e of page) if (e.type === 'TerminalAuthCodeIssued') return e.data.auth_code_sha256;
      if (page.length < PAGE) return null;
    }
    return null;
  }

  /**
   * The protocol the device may log in with: the one of its registration, else the one of
   * its first connection; null when neither is known yet.
   */
  async boundProtocol(claim: DeviceClaim): Promise<DeviceProtocol | null> {
    if (claim.protocol) return claim.protocol;
    const cached = this.bound.get(claim.device_id);
    if (cached) return cached;
    const found = await this.firstBinding(claim.device_id);
    if (found) this.remember(this.bound, claim.device_id, found);
    return found;
  }

  /**
   * Binds an unbound device to `protocol` and returns the protocol it is bound to. Two nodes
   * may bind at the same moment: the first `DeviceProtocolBound` (or a protocol in
   * `DeviceRegistered`) in the stream is the binding, so both agree on the winner.
   */
  async bindProtocol(claim: DeviceClaim, protocol: DeviceProtocol, now: number): Promise<DeviceProtocol> {
    const known = await this.boundProtocol(claim);
    if (known) return known;
    await this.store.appendToStream(streams.device(claim.device_id), [
      { id: randomUuid(), type: 'DeviceProtocolBound', data: { device_id: claim.device_id, customer_id: claim.customer_id, protocol, bound_at: now } },
    ]);
    const winner = (await this.firstBinding(claim.device_id)) ?? protocol;
    this.remember(this.bound, claim.device_id, winner);
    return winner;
  }

  /** The first protocol binding in the device stream (read forwards: it sits near the start). */
  private async firstBinding(deviceId: string): Promise<DeviceProtocol | null> {
    let from = 0n;
    for (;;) {
      const page: RecordedEvent[] = await this.store.readStream(streams.device(deviceId), { fromRevision: from, maxCount: PAGE });
      for (const e of page) {
        if (e.type === 'DeviceRegistered' && e.data.protocol) return e.data.protocol;
        if (e.type === 'DeviceProtocolBound') return e.data.protocol;
      }
      if (page.length < PAGE) return null;
      from = page[page.length - 1]!.revision + 1n;
    }
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    if (map.size >= MAX_CACHED_DEVICES && !map.has(key)) map.clear();
    map.set(key, value);
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'latin1').digest('hex');
}

function sameHex(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/** A printable name for an unidentified device, for logs and the unknown-devices list. */
export function identityLabel(identity: DeviceIdentity): string {
  return identity.imei ?? identity.terminalId ?? 'unknown';
}
