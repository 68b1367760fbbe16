/** GT06 frames for tests, built field by field as a unit writes them. */
import { crc16X25 } from '../../gateway/codec/crc.js';

/** A heartbeat (0x13): terminal info · voltage level · GSM level · language, with its serial and CRC. */
export function gt06Heartbeat(terminalInfo: number, serial: number): Buffer {
  const frame = Buffer.from([0x78, 0x78, 0x0a, 0x13, terminalInfo, 0x04, 0x04, 0x00, 0x02, serial >> 8, serial & 0xff, 0, 0, 0x0d, 0x0a]);
  frame.writeUInt16BE(crc16X25(frame, 2, frame.length - 4), frame.length - 4);
  return frame;
}
