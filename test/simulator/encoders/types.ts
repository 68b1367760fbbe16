import type { DeviceAlarmKind } from '../../../core/alarms.js';
import type { ProtocolName } from '../../../gateway/protocol.js';

/** One point of a simulated route, in our units. */
export interface SimPoint {
  fixTime: number;
  lat: number;
  lng: number;
  speedKmh: number;
  headingDeg: number;
  altitudeM: number;
  satellites: number;
  ignition: boolean;
  odometerM: number;
  /** A device-reported alarm raised with this point. */
  alarm?: DeviceAlarmKind;
}

export interface EncodeContext {
  imei: string;
  /** JT/T 808 terminal phone number (digits). */
  terminalId: string;
  /** Device-side message serial, incremented by the caller per frame. */
  serial: number;
  /**
   * JT/T 808: the auth code the platform issued in its registration reply. A unit keeps it
   * and, holding one, authenticates on later connections without registering again.
   */
  authCode?: string;
}

/** One finished step of a login dialog: what the device sent and what came back. */
export interface LoginStep {
  frame: Buffer;
  reply: Buffer;
}

/**
 * Encodes real device frames for the simulator and benchmarks, and reads the
 * server's replies the way a device would.
 */
export interface ProtocolEncoder {
  protocol: ProtocolName;
  /** Most points one data frame can carry (GT06: 1). */
  maxPointsPerFrame: number;
  /**
   * The login dialog, a frame at a time: the next frame to send after the steps done so far
   * (each waited for its reply), or null once logged in. The first frame uses `ctx.serial`,
   * each next one the serial after. JT/T 808 registers (unless `ctx.authCode` is set), then
   * authenticates with the code its registration reply carried.
   */
  loginFrame(ctx: EncodeContext, done: readonly LoginStep[]): Buffer | null;
  /** The auth code a login reply hands out (JT/T 808 0x8100 result 0), for the unit to keep; else null. */
  issuedAuthCode(reply: Buffer): string | null;
  /** One data frame carrying these points. */
  encode(points: SimPoint[], ctx: EncodeContext): Buffer;
  /** Cuts one whole server reply off the front of `buf`; null until one is there. */
  takeReply(buf: Buffer): { reply: Buffer; consumed: number } | null;
  /** True when `reply` is the acknowledgement a device expects for `frame` carrying `points` points. */
  isAck(reply: Buffer, frame: Buffer, points: number): boolean;
}
