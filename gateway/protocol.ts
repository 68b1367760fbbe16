/**
 * The contract every tracker protocol module implements. A protocol is a
 * folder of pure functions: a framer that cuts the TCP byte stream into
 * frames, and a decoder that turns one frame into records plus the reply
 * the device expects. Only gateway/server.ts touches sockets; it sends
 * `reply` after the records are durable in the event store.
 */
import type { DeviceAlarmKind } from '../core/alarms.js';
import type { DeviceProtocol } from '../core/events.js';

export type ProtocolName = DeviceProtocol;

export interface FrameSplit {
  /** Complete frames, each a view into the input (copy before keeping past the next read). */
  frames: Buffer[];
  /** Bytes of the input used up (frames plus skipped junk); the caller drops them. */
  consumed: number;
  /** Junk bytes skipped while resyncing on a delimiter (0 when none). */
  skipped: number;
  /**
   * Set when the stream cannot be framed any more (oversize frame, or junk in a
   * protocol without delimiters): the connection must be closed.
   */
  fatal?: string;
}

/** One position or status sample, in our units, protocol-neutral. */
export interface DecodedRecord {
  /** Fix (or event) time, ms since the Unix epoch, UTC. */
  fixTime: number;
  /** The GNSS fix is valid. */
  valid: boolean;
  /** Degrees WGS84; null when the frame carries no location (status-only or alarm-only frames). */
  lat: number | null;
  lng: number | null;
  speedKmh: number | null;
  headingDeg: number | null;
  altitudeM: number | null;
  satellites: number | null;
  /** Ignition (ACC) state when the frame tells it, else null. */
  ignition: boolean | null;
  /** Total odometer in metres when the device sends one, else null. */
  odometerM: number | null;
  /** Alarms the device raised with this record, already mapped to our kinds. */
  alarms: DeviceAlarm[];
  /** Every other decoded field (raw IO elements, additional items), snake_case or ioNNN keys. */
  attributes: Record<string, number | string | boolean>;
  /** The record's bytes as received: the idempotency key for its stored event. */
  raw: Buffer;
}

export interface DeviceAlarm {
  kind: DeviceAlarmKind;
  /** Device-side level or severity byte when the protocol has one (ADAS/DSM level). */
  level?: number;
  /** Protocol fields that explain the alarm (code, type byte, alarm label hex...). */
  details?: Record<string, number | string>;
}

/** How the frame names the device. */
export interface DeviceIdentity {
  /** 15-digit IMEI when the frame carries one (Teltonika login, GT06 login, JT/T 808 2019 auth). */
  imei?: string;
  /** JT/T 808 terminal phone number, digits with leading zeros stripped. */
  terminalId?: string;
}

/** Per-connection facts a decoder may read. The server owns and updates it. */
export interface SessionInfo {
  /** Set once the device identified itself and is registered. */
  imei: string | null;
  /** Device model from its registration (some IO ids and alarm codes depend on it). */
  model: string | null;
  /**
   * Offset of the device clock from UTC in minutes, when configured or announced
   * (GT06 login); null means the protocol default (UTC, JT/T 808 GMT+8).
   */
  timezoneMinutes: number | null;
  /** Frames handled on this connection so far; JT/T 808 uses it as the server reply serial. */
  frameIndex: number;
  /** Wall clock in ms, for replies that carry the time (GT06 0x8A). */
  now: number;
}

export interface Decoded {
  /** Present when the frame identifies the device (login/registration/JT808 header). */
  identity?: DeviceIdentity;
  records: DecodedRecord[];
  /** Bytes to send once the records are durable; null when the device expects no reply. */
  reply: Buffer | null;
  /**
   * Bytes to send instead of `reply` when the identified device is not registered
   * (Teltonika 0x00, JT/T 808 0x8100 with "terminal unknown"); the server then closes.
   */
  refuse?: Buffer | null;
  /** Timezone the device announced (GT06 login), in minutes east of UTC. */
  announcedTimezoneMinutes?: number;
  /** A frame understood but deliberately not turned into records (text replies, unknown vendor packets). */
  ignoredReason?: string;
  /**
   * A login step of a protocol whose terminals authenticate (JT/T 808); the connection issues
   * and checks the codes. For a registration, `reply` is what a server issuing no codes of its
   * own would answer (the terminal digits, as Traccar does); the gateway sends `accept(code)`.
   */
  authentication?: AuthenticationStep;
  /** Stores nothing and may be answered before authentication (JT/T 808 e-lock text sentences). */
  sessionless?: true;
  /** Answers to commands we sent (empty for ordinary frames); the gateway matches them to its commands. */
  replies: CommandReply[];
  /**
   * JT/T 808: the header form this frame used, the 2019 version byte or null for a 2011/2013
   * header; the gateway passes the latest one on as CommandContext.protocolVersion.
   */
  protocolVersion?: number | null;
}

export type AuthenticationStep =
  /**
   * The terminal registers (JT/T 808 0x0100): `accept(code)` is the reply handing it out;
   * `alreadyRegistered` the one refusing a new code (0x8100 result 3).
   */
  | { step: 'register'; accept(authCode: string): Buffer; alreadyRegistered: Buffer }
  /** The terminal presents its code (0x0102): `reply` accepts it, `refuse` refuses it. */
  | { step: 'authenticate'; authCode: string };

export interface ProtocolModule {
  name: ProtocolName;
  /** Largest frame accepted; bigger ones are refused by the framer. */
  maxFrameBytes: number;
  splitFrames(buf: Buffer): FrameSplit;
  /** Throws DecodeError on a frame it cannot decode (bad checksum, truncated, unsupported). */
  decode(frame: Buffer, session: SessionInfo): Decoded;
  /**
   * Present for protocols whose terminals must authenticate before anything is stored
   * (JT/T 808): the reply to a decoded frame refused because the connection has not
   * authenticated yet (null: the frame expects none).
   */
  unauthenticatedReply?(frame: Buffer, session: SessionInfo): Buffer | null;
  /** The bytes that carry `cmd` to the unit; throws CommandEncodeError when it cannot. Pure. */
  encodeCommand(cmd: WireCommand, ctx: CommandContext): EncodedCommand;
  /** How the unit's records show what an engine stop/resume did to its relay; null when they do not. Pure. */
  relayCheck(cmd: WireCommand): RelayCheck | null;
}

// ---------------------------------------------------------------------------
// Device commands (issue 55): what the gateway sends, and what comes back

/** A command as the wire needs it; the domain's names and limits are in core's command catalogue. */
export type WireCommand =
  /** `text`: the configured command text (Teltonika, GT06 send it); JT/T 808 sends its binary vehicle control. */
  | { type: 'engine_stop' | 'engine_resume'; text: string }
  | { type: 'reboot' }
  | { type: 'position_request' }
  | { type: 'set_report_interval'; intervalS: number }
  | { type: 'text'; message: string }
  | { type: 'custom'; text: string }
  | { type: 'custom'; hex: string };

export type WireCommandType = WireCommand['type'];

export interface CommandContext {
  imei: string | null;
  terminalId: string | null;
  /** The gateway's per-connection counter, 0..65535: the JT/T 808 message serial, the GT06 server flag. */
  serial: number;
  /** JT/T 808: the 2019 header's version byte (null: a 2011/2013 header). Teltonika: 14 selects Codec 14. */
  protocolVersion?: number | null;
}

export interface EncodedCommand {
  bytes: Buffer;
  /** What the reply will carry to match it; null for Teltonika, whose replies match in order. */
  matchKey: number | null;
}

export interface CommandReply {
  matchKey: number | null;
  outcome: 'acknowledged' | 'succeeded' | 'failed' | 'unsupported' | 'bad_message' | 'imei_mismatch';
  /** The unit's answer as text, when it sends one. */
  text: string | null;
  /** The protocol's result code, when it has one (JT/T 808 0x0001). */
  resultCode: number | null;
  /** The reply's bytes as received. */
  raw: Buffer;
}

/**
 * An engine command's effect as the unit reports it: `read` says whether a record shows the relay
 * cut (null: the record does not tell), `expected` what the command asked for.
 */
export interface RelayCheck {
  expected: boolean;
  read(record: Pick<DecodedRecord, 'attributes'>): boolean | null;
}

/** The relay check of a protocol whose records show the relay as one bit of a numeric attribute. */
export function relayBitCheck(cmd: WireCommand, attribute: string, mask: number): RelayCheck | null {
  if (cmd.type !== 'engine_stop' && cmd.type !== 'engine_resume') return null;
  return { expected: cmd.type === 'engine_stop', read: (r) => numericBit(r.attributes[attribute], mask) };
}

function numericBit(value: unknown, mask: number): boolean | null {
  return typeof value === 'number' ? (value & mask) !== 0 : null;
}

/** A command the protocol cannot carry (`unsupported`) or whose parameters it cannot encode (`invalid`). */
export class CommandEncodeError extends Error {
  constructor(
    readonly code: 'unsupported' | 'invalid',
    message: string,
  ) {
    super(message);
    this.name = 'CommandEncodeError';
  }
}

/** A record that carries no location (status, text reply, driver card): every position field null. */
export function recordWithoutLocation(fixTime: number, attributes: DecodedRecord['attributes'], raw: Buffer): DecodedRecord {
  return {
    fixTime,
    valid: false,
    lat: null,
    lng: null,
    speedKmh: null,
    headingDeg: null,
    altitudeM: null,
    satellites: null,
    ignition: null,
    odometerM: null,
    alarms: [],
    attributes,
    raw,
  };
}
