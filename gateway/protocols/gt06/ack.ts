/** Replies the server sends a GT06 unit. All use the short `78 78` form; each call returns a fresh buffer. */
import { crc16X25 } from '../../codec/crc.js';

export const PROTO_TIME_REQUEST = 0x8a;

/** `78 78 LEN proto content serial CRC 0D 0A`, LEN = content + 5. */
export function shortPacket(proto: number, serial: number, content: Buffer | null = null): Buffer {
  const contentBytes = content?.length ?? 0;
  const out = Buffer.allocUnsafe(10 + contentBytes);
  out[0] = 0x78;
  out[1] = 0x78;
  out[2] = 5 + contentBytes;
  out[3] = proto;
  content?.copy(out, 4);
  out.writeUInt16BE(serial & 0xffff, 4 + contentBytes);
  out.writeUInt16BE(crc16X25(out, 2, 6 + contentBytes), 6 + contentBytes);
  out[8 + contentBytes] = 0x0d;
  out[9 + contentBytes] = 0x0a;
  return out;
}

/** `79 79 00 05 proto serial CRC 0D 0A`: the echo for long-form packets that expect one. */
export function longEchoReply(proto: number, serial: number): Buffer {
  const out = Buffer.allocUnsafe(11);
  out[0] = 0x79;
  out[1] = 0x79;
  out.writeUInt16BE(5, 2);
  out[4] = proto;
  out.writeUInt16BE(serial & 0xffff, 5);
  out.writeUInt16BE(crc16X25(out, 2, 7), 7);
  out[9] = 0x0d;
  out[10] = 0x0a;
  return out;
}

/** The 5-byte echo a unit expects for login, heartbeat, location and alarm packets. */
export function echoReply(proto: number, serial: number): Buffer {
  return shortPacket(proto, serial);
}

/** 0x8A time request: the server's UTC clock as binary YY MM DD hh mm ss. */
export function timeReply(now: number, serial: number): Buffer {
  const d = new Date(now);
  const content = Buffer.from([
    d.getUTCFullYear() - 2000,
    d.getUTCMonth() + 1,
    d.getUTCDate(),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
  ]);
  return shortPacket(PROTO_TIME_REQUEST, serial, content);
}

/** WiFi 0x17/0x69: `78 78 00 proto` · the packet's 6 BCD time bytes · `0D 0A` (no serial, no CRC). */
export function wifiReply(proto: number, bcdTime: Buffer): Buffer {
  const out = Buffer.allocUnsafe(12);
  out[0] = 0x78;
  out[1] = 0x78;
  out[2] = 0;
  out[3] = proto;
  bcdTime.copy(out, 4, 0, 6);
  out[10] = 0x0d;
  out[11] = 0x0a;
  return out;
}
