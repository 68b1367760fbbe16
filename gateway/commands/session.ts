/**
 * The commands of one connected unit, on the gateway node that holds its connection: what is
 * waiting (queued, or an engine stop held until the vehicle stops), what is in flight (written,
 * its answer awaited), and the unit's latest fix on this connection. Every step runs on one
 * chain per connection, so a reply, a timer and a newly queued command never interleave.
 *
 * Each send appends `DeviceCommandSent` (markSent) before the bytes are written; a command the
 * append turned into `expired`, or that a cancel got first, is not written. A connection that
 * closes with a command in flight leaves it `sent`: its outcome is unknown, and the next login
 * sends it once more (the retry-once rule, docs/commands.md).
 */
import { randomInt } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { unfinishedCommands, markSent, recordReply, markTimedOut, rejectCommand, expireCommand, recordOutput, mayResend, type CommandRef } from '../../core/commands/device-commands.js';
import { dispatchDecision, type LatestFix } from '../../core/commands/dispatch.js';
import { deviceStream } from '../../core/commands/devices.js';
import { load } from '../../core/commands/handler.js';
import { CommandRejected } from '../../core/commands/rejection.js';
import type { DeviceClaim } from '../../core/events.js';
import type { CommandSnapshot } from '../../core/events/commands.js';
import type { EventStore } from '../../core/event-store/port.js';
import { appendFailureLevel } from '../../core/event-store/write-health.js';
import type { Logger } from '../../core/logger.js';
import { streams } from '../../core/streams.js';
import { CommandEncodeError, type CommandReply, type Decoded, type ProtocolModule, type RelayCheck, type WireCommand } from '../protocol.js';
import { replyWaitsMs } from './reply-waits.js';
import { wireCommandOf } from './wire.js';

/** What a session needs of its connection. */
export interface CommandLink {
  readonly claim: DeviceClaim;
  readonly protocol: ProtocolModule;
  /** JT/T 808: the header form of the unit's latest frame (Decoded.protocolVersion). */
  readonly protocolVersion: number | null;
  /** Writes to the unit's socket; false when it is gone. */
  write(bytes: Buffer): boolean;
}

export interface CommandSessionDeps {
  store: EventStore;
  clock: Clock;
  log: Logger;
  /** The first wait for an answer (JT/T 808 grows it per retransmission); also the wait for an output report. */
  replyTimeoutMs: number;
}

interface InFlight {
  command: CommandSnapshot;
  /** What the answer carries; null for Teltonika, whose answers match the oldest command in flight. */
  matchKey: number | null;
  bytes: Buffer;
  waits: number[];
  tries: number;
  timer: NodeJS.Timeout | null;
  /** Set once the unit acknowledged an engine command whose relay its status records report. */
  output: (RelayCheck & { after: number }) | null;
  /** How its records show the relay (ProtocolModule.relayCheck), known at encode time. */
  check: RelayCheck | null;
}

export class CommandSession {
  private readonly waiting: CommandSnapshot[] = [];
  private readonly inFlight: InFlight[] = [];
  /** Every command this session took on, so one seen both at login and in the log is handled once. */
  private readonly known = new Set<string>();
  private latest: { fixTime: number; fix: LatestFix } | null = null;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  /** The per-connection counter (JT/T 808 serial, GT06 server flag), from a random start so a late answer to another connection's command matches none here. */
  private serial = randomInt(0, 0x1_0000);
  private readonly log: Logger;

  constructor(
    private readonly link: CommandLink,
    private readonly deps: CommandSessionDeps,
  ) {
    this.log = deps.log.child({ device: link.claim.device_id, component: 'commands' });
  }

  private get deviceId(): string {
    return this.link.claim.device_id;
  }

  /** Loads the device's unfinished commands; after the login reply, which is written in the turn that bound the connection. */
  start(): void {
    setImmediate(() => this.run(() => this.takeOnUnfinished()));
  }

  /** A command queued in the log (this node's API or another's). */
  offer(command: CommandSnapshot): void {
    this.run(async () => {
      if (this.known.has(command.command_id)) return;
      this.known.add(command.command_id);
      this.waiting.push(command);
      await this.dispatch();
    });
  }

  /** A queued command cancelled or expired in the log: it is not sent. */
  forget(commandId: string): void {
    const at = this.waiting.findIndex((c) => c.command_id === commandId);
    if (at >= 0) this.waiting.splice(at, 1);
  }

  /** A decoded frame of the unit, accepted: its fixes, answers and output reports. Read now, handled on the chain. */
  observe(decoded: Decoded): void {
    if (this.closed) return;
    const before = this.latest;
    for (const r of decoded.records) {
      if (r.speedKmh === null && r.ignition === null) continue;
      if (this.latest && r.fixTime < this.latest.fixTime) continue;
      // A speed without a valid GNSS fix says nothing about motion.
      this.latest = { fixTime: r.fixTime, fix: { speed_kmh: r.valid ? r.speedKmh : null, ignition: r.ignition } };
    }
    const replies = decoded.replies;
    const outputs = this.inFlight.some((f) => f.output) ? decoded.records.map((r) => ({ fixTime: r.fixTime, attributes: r.attributes })) : [];
    const heldMayGo = this.latest !== before && this.waiting.length > 0;
    if (replies.length === 0 && outputs.length === 0 && !heldMayGo) return;
    this.run(async () => {
      for (const reply of replies) await this.answered(reply);
      for (const record of outputs) await this.outputReported(record);
      await this.dispatch();
    });
  }

  /** The connection closed: timers stop; what is in flight stays `sent` (outcome unknown). */
  close(): void {
    this.closed = true;
    for (const f of this.inFlight) if (f.timer) clearTimeout(f.timer);
    this.inFlight.length = 0;
    this.waiting.length = 0;
  }

  private run(step: () => Promise<void>): void {
    this.chain = this.chain.then(async () => {
      if (this.closed) return;
      try {
        await step();
      } catch (err) {
        this.log[appendFailureLevel(err, 'error')]({ err }, 'device command step failed; retried on the next frame');
      }
    });
  }

  private async takeOnUnfinished(): Promise<void> {
    for (const command of await unfinishedCommands(this.deps.store, this.deviceId)) {
      if (this.known.has(command.command_id)) continue;
      this.known.add(command.command_id);
      if (command.status === 'queued') this.waiting.push(command);
      // Sent before and never answered: the outcome was lost with the connection or the node.
      else if (command.status === 'sent' && mayResend(command)) await this.send(command, true);
      else if (command.status === 'acknowledged') await this.settle(recordOutput(this.deps.store, this.deps.clock, { ...this.ref(command), asAsked: true }));
      else await this.settle(markTimedOut(this.deps.store, this.deps.clock, this.ref(command)));
    }
    await this.dispatch();
  }

  /** Sends what may go now, in queue order; Teltonika (no match key) keeps one command in flight. */
  private async dispatch(): Promise<void> {
    for (const command of [...this.waiting]) {
      if (this.closed) return;
      if (this.link.protocol.name === 'teltonika' && this.inFlight.length > 0) return;
      const decision = dispatchDecision(command, this.latest?.fix ?? null, this.deps.clock.now());
      if (decision === 'hold') continue;
      this.forget(command.command_id);
      try {
        if (decision === 'expire') await this.settle(expireCommand(this.deps.store, this.deps.clock, this.ref(command)));
        else await this.send(command, false);
      } catch (err) {
        // The store did not answer: the command waits for the next frame's dispatch.
        this.waiting.unshift(command);
        throw err;
      }
    }
  }

  private async send(command: CommandSnapshot, resend: boolean): Promise<void> {
    let encoded: { bytes: Buffer; matchKey: number | null; wire: WireCommand };
    try {
      encoded = await this.encode(command);
    } catch (err) {
      if (!(err instanceof CommandEncodeError)) throw err;
      await this.settle(rejectCommand(this.deps.store, this.deps.clock, { ...this.ref(command), error: `${err.code}: ${err.message}` }));
      return;
    }
    let sent: CommandSnapshot;
    try {
      sent = (await markSent(this.deps.store, this.deps.clock, { ...this.ref(command), resend })).command;
    } catch (err) {
      // Cancelled, or sent by another node, since this session read it: nothing to write.
      if (err instanceof CommandRejected) return;
      throw err;
    }
    if (sent.status !== 'sent' || this.closed) return;
    const flight: InFlight = {
      command: sent,
      matchKey: encoded.matchKey,
      bytes: encoded.bytes,
      waits: replyWaitsMs(this.link.protocol.name, this.deps.replyTimeoutMs),
      tries: 0,
      timer: null,
      output: null,
      check: this.link.protocol.relayCheck(encoded.wire),
    };
    this.inFlight.push(flight);
    this.write(flight);
    this.log.info({ command: sent.command_id, type: sent.type, attempt: sent.send_attempts }, 'device command sent');
  }

  private async encode(command: CommandSnapshot): Promise<{ bytes: Buffer; matchKey: number | null; wire: WireCommand }> {
    const protocol = this.link.protocol.name;
    const engine = command.type === 'engine_stop' || command.type === 'engine_resume';
    const texts = engine ? ((await load(this.deps.store, streams.device(this.deviceId), deviceStream)).state?.fields.command_texts ?? null) : null;
    const wire = wireCommandOf(command, protocol, texts);
    this.serial = (this.serial + 1) & 0xffff;
    const { bytes, matchKey } = this.link.protocol.encodeCommand(wire, {
      imei: this.link.claim.imei,
      terminalId: this.link.claim.terminal_id,
      serial: this.serial,
      protocolVersion: this.link.protocolVersion,
    });
    return { bytes, matchKey, wire };
  }

  /** One try: the bytes, then the wait for this try's answer. */
  private write(flight: InFlight): void {
    this.link.write(flight.bytes);
    this.wait(flight, flight.waits[flight.tries]!);
    flight.tries += 1;
  }

  private wait(flight: InFlight, ms: number): void {
    flight.timer = setTimeout(() => this.run(() => this.waited(flight)), ms);
    flight.timer.unref();
  }

  private async waited(flight: InFlight): Promise<void> {
    flight.timer = null;
    if (!this.inFlight.includes(flight)) return;
    if (!flight.output && flight.tries < flight.waits.length) {
      this.write(flight);
      return;
    }
    this.land(flight);
    // No status record told the relay within the wait: the unit's acknowledgement stands.
    if (flight.output) await this.settle(recordOutput(this.deps.store, this.deps.clock, { ...this.ref(flight.command), asAsked: true }));
    else await this.settle(markTimedOut(this.deps.store, this.deps.clock, this.ref(flight.command)));
    await this.dispatch();
  }

  private async answered(reply: CommandReply): Promise<void> {
    const flight = this.inFlight.find((f) => !f.output && f.matchKey === reply.matchKey);
    if (!flight) {
      this.log.debug({ matchKey: reply.matchKey, text: reply.text }, 'an answer to no command in flight; ignored');
      return;
    }
    if (flight.timer) clearTimeout(flight.timer);
    const input = { outcome: reply.outcome, text: reply.text, result_code: reply.resultCode, raw_hex: reply.raw.toString('hex') };
    if (reply.outcome === 'succeeded' && flight.check) {
      // The unit took it; its next status record says whether the relay moved.
      const outcome = await recordReply(this.deps.store, this.deps.clock, { ...this.ref(flight.command), reply: { ...input, outcome: 'acknowledged' } });
      flight.output = { ...flight.check, after: outcome.command.sent_at ?? this.deps.clock.now() };
      this.wait(flight, this.deps.replyTimeoutMs);
      return;
    }
    this.land(flight);
    await this.settle(recordReply(this.deps.store, this.deps.clock, { ...this.ref(flight.command), reply: input }));
  }

  private async outputReported(record: { fixTime: number; attributes: Record<string, number | string | boolean> }): Promise<void> {
    for (const flight of this.inFlight.filter((f) => f.output)) {
      const output = flight.output!;
      // A buffered record from before the command says nothing of what it did.
      if (record.fixTime < output.after) continue;
      const state = output.read(record);
      if (state === null) continue;
      if (flight.timer) clearTimeout(flight.timer);
      this.land(flight);
      await this.settle(recordOutput(this.deps.store, this.deps.clock, { ...this.ref(flight.command), asAsked: state === output.expected }));
    }
  }

  private land(flight: InFlight): void {
    const at = this.inFlight.indexOf(flight);
    if (at >= 0) this.inFlight.splice(at, 1);
  }

  /** A decision whose outcome the session needs no more of: refusals (another writer got there first) are fine. */
  private async settle(outcome: Promise<unknown>): Promise<void> {
    try {
      await outcome;
    } catch (err) {
      if (!(err instanceof CommandRejected)) throw err;
    }
  }

  private ref(command: CommandSnapshot): CommandRef {
    return { device_id: command.device_id, command_id: command.command_id };
  }
}
