/**
 * Which devices are connected, as the device streams tell it (`DeviceConnected` /
 * `DeviceDisconnected`, from which the devices read model derives online/offline).
 *
 * - One live connection per device on a node: a second one wins, the older socket is
 *   closed, and the replacement is recorded (`DeviceConnectionReplaced`, throttled per device).
 * - Across nodes, the newest `DeviceConnected` in the log wins: a node that sees another node's
 *   (through the log follower) closes its own connection of the device and forgets it, writing
 *   nothing, since the device is online there. A node whose own record is the later one keeps
 *   the device; the other node then lets go when it sees that record.
 * - A device that reconnects within the grace period after its connection closed keeps the
 *   connection id already recorded: no disconnected/connected pair for a quick redial, so a
 *   reconnect storm of one unit writes one pair, not one per reconnect.
 * - The writes of every device pass one token bucket; when it is empty they wait, and only
 *   each device's latest state is written (a connection that came and went in the meantime
 *   writes nothing). Status is late under a storm, never wrong once it has passed.
 */
import type { Clock } from '../core/clock.js';
import type { DeviceClaim, DeviceConnected, DeviceDisconnected, DeviceProtocol } from '../core/events.js';
import { comparePositions, type EventStore, type LogPosition, type RecordedEvent } from '../core/event-store/port.js';
import { appendFailureLevel } from '../core/event-store/write-health.js';
import { randomUuid } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { streams } from '../core/streams.js';
import type { KeyedThrottle } from './keyed-throttle.js';
import { LogThrottle } from './log-throttle.js';
import type { GatewayCounters } from './stats.js';
import type { TokenBucket } from '../core/token-bucket.js';

export type DisconnectReason = DeviceDisconnected['data']['reason'];

/** What presence needs of a bound connection. */
export interface PresenceConnection {
  readonly claim: DeviceClaim;
  readonly connectionId: string;
  readonly protocolName: DeviceProtocol;
  readonly remoteAddress: string;
  readonly connectedAt: number;
  close(reason: 'replaced', why: string): void;
}

export interface PresenceDeps {
  store: EventStore;
  clock: Clock;
  log: Logger;
  stats: GatewayCounters;
  /** Shared by the connection events of every device. */
  bucket: TokenBucket;
  /** Per-device limit (and shared budget) of `DeviceConnectionReplaced` events. */
  replacements: KeyedThrottle;
  /** A reconnect within this long after a close keeps the recorded connection. */
  graceMs: number;
  /** This gateway node's id, written into its `DeviceConnected` events. */
  nodeId: string;
}

interface DeviceState {
  claim: DeviceClaim;
  live: PresenceConnection | null;
  /** The connection id this node recorded the device online with (no disconnect written since), or null. */
  written: string | null;
  /** Where that record is in the log. */
  writtenAt: LogPosition | null;
  /** Another node's `DeviceConnected` seen while a write of this node was in flight: decided once it lands. */
  elsewhereAt: LogPosition | null;
  lastClose: { reason: DisconnectReason; lastSeenAt: number; at: number } | null;
  graceTimer: NodeJS.Timeout | null;
  writing: boolean;
}

/** Replacement log lines: at most one per device per interval. */
const REPLACED_LOG_INTERVAL_MS = 10_000;
/** A failed write is tried again after this long. */
const RETRY_MS = 1_000;

export class DevicePresence {
  private readonly devices = new Map<string, DeviceState>();
  /** Devices whose recorded state may differ from the live one, oldest first. */
  private readonly dirty = new Set<string>();
  private flushing: Promise<void> | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly replacedLog = new LogThrottle(REPLACED_LOG_INTERVAL_MS);
  /** Set by flushAll: the gateway is stopping, and the store may close after it. */
  private stopped = false;

  constructor(private readonly deps: PresenceDeps) {}

  /** A connection bound to its device: the newest wins. */
  connected(c: PresenceConnection): void {
    const id = c.claim.device_id;
    let state = this.devices.get(id);
    if (!state) {
      state = { claim: c.claim, live: null, written: null, writtenAt: null, elsewhereAt: null, lastClose: null, graceTimer: null, writing: false };
      this.devices.set(id, state);
    }
    const previous = state.live;
    state.live = c;
    if (state.graceTimer) {
      clearTimeout(state.graceTimer);
      state.graceTimer = null;
    }
    // A redial or a replacement keeps the connection already recorded: no disconnected/connected pair.
    if (state.written !== null) this.deps.stats.connectionEventsSuppressed += 2;
    if (previous && previous !== c) this.replaced(previous, c);
    this.markDirty(id);
  }

  /** A bound connection closed; the device goes offline once the grace period passes without a reconnect. */
  closed(c: PresenceConnection, reason: DisconnectReason, lastSeenAt: number): void {
    const state = this.devices.get(c.claim.device_id);
    if (!state || state.live !== c) return; // replaced: the newer connection carries on
    state.live = null;
    state.lastClose = { reason, lastSeenAt, at: this.deps.clock.now() };
    if (state.graceTimer) clearTimeout(state.graceTimer);
    state.graceTimer = setTimeout(() => {
      state.graceTimer = null;
      this.markDirty(c.claim.device_id);
    }, this.deps.graceMs);
    state.graceTimer.unref();
  }

  /**
   * A `DeviceConnected` in the log (the follower hands over every node's): when another node wrote
   * it after this node's own record of the device, this node lets go of the device.
   */
  connectedInLog(e: RecordedEvent<DeviceConnected>): void {
    const d = e.data;
    const state = this.devices.get(d.device_id);
    if (this.stopped || !state || d.gateway_node === this.deps.nodeId) return;
    if (d.connection_id === state.written || d.connection_id === state.live?.connectionId) return;
    if (state.writing) {
      if (!state.elsewhereAt || comparePositions(e.position, state.elsewhereAt) > 0) state.elsewhereAt = e.position;
      return;
    }
    this.letGoIfOlder(d.device_id, state, e.position);
  }

  /** Writes every pending state now, grace periods and bucket aside (the gateway is stopping). */
  async flushAll(): Promise<void> {
    this.stopped = true;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    await this.flushing;
    for (const [id, state] of this.devices) {
      if (state.graceTimer) clearTimeout(state.graceTimer);
      state.graceTimer = null;
      await this.write(id, state);
    }
    this.dirty.clear();
  }

  private replaced(previous: PresenceConnection, next: PresenceConnection): void {
    const { stats, clock, log } = this.deps;
    stats.connectionsReplaced += 1;
    previous.close('replaced', 'a newer connection of the device logged in');
    const now = clock.now();
    const id = next.claim.device_id;
    const skipped = this.replacedLog.take(id, now);
    if (skipped >= 0) {
      log.warn(
        { device: id, imei: next.claim.imei, previous: previous.remoteAddress, remote: next.remoteAddress, notLoggedForDevice: skipped },
        'device.connection_replaced: a second connection logged in; the older one is closed',
      );
    }
    const count = this.deps.replacements.take(`replaced|${id}`, now);
    if (count < 0) stats.connectionEventsSuppressed += 1;
    if (count <= 0) return;
    this.deps.store
      .appendToStream(streams.device(id), [
        {
          id: randomUuid(),
          type: 'DeviceConnectionReplaced',
          data: {
            device_id: id,
            customer_id: next.claim.customer_id,
            previous_connection_id: previous.connectionId,
            connection_id: next.connectionId,
            previous_remote_address: previous.remoteAddress,
            remote_address: next.remoteAddress,
            protocol: next.protocolName,
            replaced_at: now,
            count,
          },
        },
      ])
      .catch((err: unknown) => log[appendFailureLevel(err, 'warn')]({ err, device: id }, 'could not record a replaced connection'));
  }

  /** Lets go of the device unless this node's own record is later in the log than `elsewhereAt`. */
  private letGoIfOlder(id: string, state: DeviceState, elsewhereAt: LogPosition): void {
    if (state.writtenAt && comparePositions(state.writtenAt, elsewhereAt) > 0) return;
    this.devices.delete(id);
    this.dirty.delete(id);
    if (state.graceTimer) clearTimeout(state.graceTimer);
    state.graceTimer = null;
    const live = state.live;
    state.live = null;
    if (!live) return;
    this.deps.stats.connectionsReplaced += 1;
    live.close('replaced', 'the device logged in on another gateway node');
    const skipped = this.replacedLog.take(id, this.deps.clock.now());
    if (skipped >= 0) {
      this.deps.log.warn(
        { device: id, imei: state.claim.imei, remote: live.remoteAddress, notLoggedForDevice: skipped },
        'device.connection_replaced: the device logged in on another gateway node; its connection here is closed',
      );
    }
  }

  private markDirty(id: string): void {
    if (this.stopped) return;
    this.dirty.add(id);
    this.kick();
  }

  private kick(): void {
    if (this.flushing || this.flushTimer) return;
    this.flushing = this.flushLoop().finally(() => (this.flushing = null));
  }

  private async flushLoop(): Promise<void> {
    for (const id of this.dirty) {
      this.dirty.delete(id);
      const state = this.devices.get(id);
      if (!state || state.writing || state.graceTimer || !this.differs(state)) {
        if (state && !state.live && state.written === null && !state.graceTimer && !state.writing) this.devices.delete(id);
        continue;
      }
      const now = this.deps.clock.now();
      if (!this.deps.bucket.take(now)) {
        // Out of budget: wait for a token; only the latest state is written then.
        this.deps.stats.connectionEventsDeferred += 1;
        this.dirty.add(id);
        this.flushTimer = setTimeout(() => {
          this.flushTimer = null;
          this.kick();
        }, Math.max(10, this.deps.bucket.waitMs(now)));
        this.flushTimer.unref();
        return;
      }
      await this.write(id, state);
    }
  }

  private differs(state: DeviceState): boolean {
    return (state.live !== null) !== (state.written !== null);
  }

  /** Brings the device stream to the live state: connected, or disconnected. */
  private async write(id: string, state: DeviceState): Promise<void> {
    if (!this.differs(state) || state.writing) return;
    const live = state.live;
    const { claim } = state;
    state.writing = true;
    try {
      if (live) {
        const result = await this.deps.store.appendToStream(streams.device(id), [
          {
            id: randomUuid(),
            type: 'DeviceConnected',
            data: {
              device_id: id,
              customer_id: claim.customer_id,
              connection_id: live.connectionId,
              protocol: live.protocolName,
              remote_address: live.remoteAddress,
              at: live.connectedAt,
              gateway_node: this.deps.nodeId,
            },
          },
        ]);
        state.written = live.connectionId;
        state.writtenAt = result.position;
      } else if (state.written !== null) {
        const close = state.lastClose ?? { reason: 'closed' as const, lastSeenAt: this.deps.clock.now(), at: this.deps.clock.now() };
        await this.deps.store.appendToStream(streams.device(id), [
          {
            id: randomUuid(),
            type: 'DeviceDisconnected',
            data: {
              device_id: id,
              customer_id: claim.customer_id,
              connection_id: state.written,
              reason: close.reason,
              last_seen_at: close.lastSeenAt,
              at: close.at,
            },
          },
        ]);
        state.written = null;
        state.writtenAt = null;
      }
    } catch (err) {
      this.deps.log[appendFailureLevel(err, 'warn')]({ err, device: id }, 'could not record a connection change; trying again');
      setTimeout(() => this.markDirty(id), RETRY_MS).unref();
      return;
    } finally {
      state.writing = false;
      // Another node's login seen meanwhile: now that this node's record has landed (or not), the later one wins.
      const elsewhereAt = state.elsewhereAt;
      state.elsewhereAt = null;
      if (elsewhereAt && this.devices.get(id) === state) this.letGoIfOlder(id, state, elsewhereAt);
    }
    if (this.devices.get(id) !== state) return;
    // The live state may have moved on while the append was in flight.
    if (this.differs(state) && !state.graceTimer) this.dirty.add(id);
    else if (!state.live && state.written === null && !state.graceTimer) this.devices.delete(id);
  }
}
