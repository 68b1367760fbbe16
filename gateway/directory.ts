/**
 * Which registered device a connection belongs to. A login reads one claim
 * stream (`imei-…` or `terminal-…`) and the first page of the device's stream (its
 * registration, and the protocol binding that sits near it); answers are cached, unknown ones only
 * briefly so a device registered a moment ago is let in on its next try.
 * It also keeps what the device stream says about logging in: the JT/T 808
 * auth code last issued (a hash of it) and the protocol the device is bound
 * to. Both live in the store, so every gateway node and every restart agrees.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { DeviceClaim, DeviceProtocol } from '../core/events.js';
import { WrongExpectedRevisionError, type EventStore, type EventToAppend, type ExpectedRevision, type RecordedEvent } from '../core/event-store/port.js';
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
  /**
   * device id → the last revision of its stream when a login read it whole and found no binding.
   * The binding that follows appends on that revision, so it needs no read of its own; taken once.
   */
  private readonly unboundAt = new Map<string, bigint>();

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
    const deviceId = last.data.device_id;
    // A page rather than the first event alone: the binding the login asks for next is in it.
    const page = await this.store.readStream(streams.device(deviceId), { maxCount: PAGE });
    if (page[0]?.type !== 'DeviceRegistered') return null;
    const binding = bindingIn(page);
    if (binding) this.remember(this.bound, deviceId, binding);
    else if (page.length < PAGE) this.remember(this.unboundAt, deviceId, page[page.length - 1]!.revision);
    return last.data;
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
   * The protocol the device may log in with: the one of its registration, else the one of its
   * first connection, which binds an unbound device to `protocol` now. Two nodes
   * may bind at the same moment: the first `DeviceProtocolBound` (or a protocol in
   * `DeviceRegistered`) in the stream is the binding, so both agree on the winner.
   */
  async bindProtocol(claim: DeviceClaim, protocol: DeviceProtocol, now: number): Promise<DeviceProtocol> {
    if (claim.protocol) return claim.protocol;
    const cached = this.bound.get(claim.device_id);
    if (cached) return cached;
    const stream = streams.device(claim.device_id);
    const bound: EventToAppend = {
      id: randomUuid(),
      type: 'DeviceProtocolBound',
      data: { device_id: claim.device_id, customer_id: claim.customer_id, protocol, bound_at: now },
    };
    const seen = this.unboundAt.get(claim.device_id);
    this.unboundAt.delete(claim.device_id);
    const known = seen === undefined ? await this.firstBinding(claim.device_id) : { protocol: null, lastRevision: seen };
    if (known.protocol) return this.remembered(claim.device_id, known.protocol);
    // Unbound as of that revision: appended on it, the binding is the stream's first, with no read to check.
    try {
      await this.store.appendToStream(stream, [bound], { expectedRevision: known.lastRevision });
      return this.remembered(claim.device_id, protocol);
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError)) throw err;
    }
    // The stream grew meanwhile (another node, or another event of the device): whoever bound first wins.
    const again = await this.firstBinding(claim.device_id);
    if (again.protocol) return this.remembered(claim.device_id, again.protocol);
    await this.store.appendToStream(stream, [bound]);
    return this.remembered(claim.device_id, (await this.firstBinding(claim.device_id)).protocol ?? protocol);
  }

  private remembered(deviceId: string, protocol: DeviceProtocol): DeviceProtocol {
    this.remember(this.bound, deviceId, protocol);
    return protocol;
  }

  /**
   * The first protocol binding in the device stream (read forwards: it sits near the start),
   * and the revision the stream was read up to (what a binding appended next expects).
   */
  private async firstBinding(deviceId: string): Promise<{ protocol: DeviceProtocol | null; lastRevision: ExpectedRevision }> {
    let lastRevision: ExpectedRevision = 'no_stream';
    let from = 0n;
    for (;;) {
      const page: RecordedEvent[] = await this.store.readStream(streams.device(deviceId), { fromRevision: from, maxCount: PAGE });
      if (page.length > 0) {
        lastRevision = page[page.length - 1]!.revision;
        from = lastRevision + 1n;
      }
      const protocol = bindingIn(page);
      if (protocol || page.length < PAGE) return { protocol, lastRevision };
    }
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    if (map.size >= MAX_CACHED_DEVICES && !map.has(key)) map.clear();
    map.set(key, value);
  }
}

/** The protocol a page of a device stream binds the device to, if it holds the binding. */
function bindingIn(page: readonly RecordedEvent[]): DeviceProtocol | null {
  for (const e of page) {
    if (e.type === 'DeviceRegistered' && e.data.protocol) return e.data.protocol;
    if (e.type === 'DeviceProtocolBound') return e.data.protocol;
  }
  return null;
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
