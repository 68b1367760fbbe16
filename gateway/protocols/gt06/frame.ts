/**
 * GT06 TCP framing (see README.md). `78 78 LEN(u8) … 0D 0A` is LEN + 5 bytes long,
 * `79 79 LEN(u16) … 0D 0A` LEN + 6. When the computed end is not `0D 0A` (devices that put
 * the WiFi AP count in LEN, or miscount), the frame runs to the next `0D 0A`, as Traccar's
 * framer does. Frames are views into the input.
 */
import type { FrameSplit } from '../../protocol.js';

export const SHORT_START = 0x78;
export const LONG_START = 0x79;
const CR = 0x0d;
const LF = 0x0a;

export const PROTO_LOGIN = 0x01;
/** WiFi packets whose LEN byte holds the access-point count (no serial, no CRC). */
export const WIFI_PROTOCOLS: ReadonlySet<number> = new Set([0x17, 0x69]);

/**
 * Largest frame accepted. LEN is a u16 in the long form; the corpus' largest frame is
 * 291 bytes and the vendor documents stay under 1 KiB, so 2 KiB leaves room without
 * letting one bad length pin 64 KiB of input.
 */
export const MAX_FRAME_BYTES = 2048;

/** The 15-byte login some units send: 78 78 0D 01 · IMEI(8) · 1 byte · 0D 0A, with no serial or CRC. */
export const SHORT_LOGIN_BYTES = 15;

const WAIT = -1;
const NOT_A_FRAME = -2;

export function splitFrames(buf: Buffer, maxFrameBytes = MAX_FRAME_BYTES): FrameSplit {
  const frames: Buffer[] = [];
  let at = 0;
  let skipped = 0;
  while (at < buf.length) {
    const start = nextStart(buf, at);
    if (start < 0) {
      // Keep a trailing 78/79: it may be the first half of the next start.
      const last = buf[buf.length - 1];
      const keep = last === SHORT_START || last === LONG_START ? 1 : 0;
      skipped += buf.length - keep - at;
      at = buf.length - keep;
      break;
    }
    skipped += start - at;
    at = start;
    const end = frameEnd(buf, at, maxFrameBytes);
    if (end === WAIT) break;
    if (end === NOT_A_FRAME) {
      // Not a frame after all: resync on the next start after this one.
      skipped += 2;
      at += 2;
      continue;
    }
    frames.push(buf.subarray(at, end));
    at = end;
  }
  return { frames, consumed: at, skipped };
}

/** Index of the next `78 78` or `79 79` at or after `from`, or -1. */
function nextStart(buf: Buffer, from: number): number {
  for (let i = from; i + 1 < buf.length; i++) {
    const b = buf[i]!;
    if ((b === SHORT_START || b === LONG_START) && buf[i + 1] === b) {
      // `78 78 78 …`: LEN 0x78 here, or a junk 78 before a start. When the frame one byte
      // later ends with 0D 0A where its LEN says, the first 78 was junk.
      if (b === SHORT_START && buf[i + 2] === b && i + 3 < buf.length) {
        const end = i + 1 + buf[i + 3]! + 5;
        if (end <= buf.length && isTrailer(buf, end - 2)) continue;
      }
      return i;
    }
  }
  return -1;
}

const isTrailer = (buf: Buffer, at: number): boolean => buf[at] === CR && buf[at + 1] === LF;

/** End (exclusive) of the frame starting at `at`, WAIT for more input, or NOT_A_FRAME. */
function frameEnd(buf: Buffer, at: number, maxFrameBytes: number): number {
  const long = buf[at] === LONG_START;
  const headerBytes = long ? 4 : 3;
  if (buf.length < at + headerBytes + 1) return WAIT;
  const length = long ? buf.readUInt16BE(at + 2) : buf[at + 2]!;
  const proto = buf[at + headerBytes]!;
  const computedEnd = at + length + (long ? 6 : 5);

  if (computedEnd - at > maxFrameBytes) return NOT_A_FRAME;
  if (computedEnd <= buf.length && computedEnd - at >= headerBytes + 3 && isTrailer(buf, computedEnd - 2)) return computedEnd;
  if (!long && proto === PROTO_LOGIN && isTrailer(buf, at + SHORT_LOGIN_BYTES - 2)) return at + SHORT_LOGIN_BYTES;
  const lengthUnreliable = !long && WIFI_PROTOCOLS.has(proto);
  if (computedEnd > buf.length && !lengthUnreliable) return WAIT;
  return scanToTrailer(buf, at, headerBytes, maxFrameBytes);
}

/**
 * The LEN field is wrong: the frame ends at the next `0D 0A`. A start marker before it
 * means the "frame" was junk that happened to look like a header: resync on the marker.
 */
function scanToTrailer(buf: Buffer, at: number, headerBytes: number, maxFrameBytes: number): number {
  const limit = Math.min(buf.length, at + maxFrameBytes);
  for (let i = at + headerBytes + 1; i + 1 < limit; i++) {
    const b = buf[i]!;
    if (b === CR && buf[i + 1] === LF) return i + 2;
    if ((b === SHORT_START || b === LONG_START) && buf[i + 1] === b) return NOT_A_FRAME;
  }
  return limit === buf.length && buf.length - at < maxFrameBytes ? WAIT : NOT_A_FRAME;
}
