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
}

/**
 * Encodes real device frames for the simulator and benchmarks, and reads the
 * server's replies the way a device would.
 */
export interface ProtocolEncoder {
  protocol: ProtocolName;
  /** Most points one data frame can carry (GT06: 1). */
  maxPointsPerFrame: number;
  /** Frames a device sends right after connecting; each one waits for its reply. */
  handshake(ctx: EncodeContext): Buffer[];
  /** One data frame carrying these points. */
  encode(points: SimPoint[], ctx: EncodeContext): Buffer;
  /** Cuts one whole server reply off the front of `buf`; null until one is there. */
  takeReply(buf: Buffer): { reply: Buffer; consumed: number } | null;
  /** True when `reply` is the acknowledgement a device expects for `frame` carrying `points` points. */
  isAck(reply: Buffer, frame: Buffer, points: number): boolean;
}
