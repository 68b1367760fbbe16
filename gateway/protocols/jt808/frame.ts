/**
 * JT/T 808 TCP framing (see README.md). Messages are `7E … 7E`, with 7E/7D inside escaped
 * as 7D 02 / 7D 01. Some e-lock units also send ASCII `( … )` sentences on the same port.
 *
 * Frames are emitted as views into the input, STILL ESCAPED, with both delimiters: the
 * decoder unescapes, and only when the frame holds a 7D (most do not), so the framer never
 * copies. `unescapeFrame` gives the de-escaped form (what Traccar's frame decoder emits).
 */
import { DecodeError } from '../../codec/reader.js';
import type { FrameSplit } from '../../protocol.js';

export const DELIMITER = 0x7e;
export const ESCAPE = 0x7d;
/** 7D 02 stands for 7E, 7D 01 for 7D. */
export const ESCAPED_DELIMITER = 0x02;
export const ESCAPED_ESCAPE = 0x01;

export const TEXT_OPEN = 0x28; // '('
export const TEXT_CLOSE = 0x29; // ')'

/**
 * Largest message frame accepted, escaped, delimiters included. The body length field has
 * 10 bits (at most 1023 bytes); the largest header is the 2019 one with subpackaging
 * (id 2 + props 2 + version 1 + phone 10 + serial 2 + packet count/index 4 = 21 bytes); plus
 * the check byte: 1045 bytes, each of which may double when escaped, plus two delimiters.
 * Nothing longer can be a valid message, so a longer run is junk and is resynced past.
 */
export const MAX_FRAME_BYTES = 2 * (21 + 1023 + 1) + 2;

/** The `( … )` sentences seen in the wild are under 100 bytes; a longer run is junk. */
export const MAX_TEXT_FRAME_BYTES = 512;

/**
 * Cuts whole frames off the front of `buf`. Bytes before a `7E` or `(` are junk and are
 * skipped; an unfinished frame waits for more input. Framing never becomes fatal: with
 * delimiters there is always a next 7E to resync on.
 */
export function splitFrames(buf: Buffer, maxFrameBytes = MAX_FRAME_BYTES): FrameSplit {
  const frames: Buffer[] = [];
  let at = 0;
  let skipped = 0;
  while (at < buf.length) {
    const start = nextFrameStart(buf, at);
    if (start < 0) {
      // No delimiter in the rest: all junk, none of it can start a frame later.
      skipped += buf.length - at;
      at = buf.length;
      break;
    }
    skipped += start - at;
    at = start;

    if (buf[at] === TEXT_OPEN) {
      const end = textFrameEnd(buf, at);
      if (end === WAIT) break;
      if (end === NOT_A_FRAME) {
        skipped += 1; // a stray '(' in junk
        at += 1;
        continue;
      }
      frames.push(buf.subarray(at, end));
      at = end;
      continue;
    }

    const close = buf.indexOf(DELIMITER, at + 1);
    if (close < 0) {
      if (buf.length - at <= maxFrameBytes) break; // wait for the rest
      // No valid frame is this long: drop it and hunt for the next 7E.
      skipped += buf.length - at;
      at = buf.length;
      break;
    }
    if (close === at + 1) {
      // 7E 7E: the first one closed a frame whose start we never saw; the second opens the next.
      skipped += 1;
      at = close;
      continue;
    }
    if (close + 1 - at > maxFrameBytes) {
      // Oversize: the closing 7E may really open the next frame, so resync on it.
      skipped += close - at;
      at = close;
      continue;
    }
    frames.push(buf.subarray(at, close + 1));
    at = close + 1;
  }
  return { frames, consumed: at, skipped };
}

/** Index of the next `7E` or `(` at or after `from`, or -1. */
function nextFrameStart(buf: Buffer, from: number): number {
  const delimiter = buf.indexOf(DELIMITER, from);
  // Only look for '(' in the junk before the next 7E: a cheap bounded scan.
  const limit = delimiter < 0 ? buf.length : delimiter;
  for (let i = from; i < limit; i++) if (buf[i] === TEXT_OPEN) return i;
  return delimiter;
}

const WAIT = -1;
const NOT_A_FRAME = -2;

/** End (exclusive) of the `( … )` sentence starting at `from`; WAIT if unfinished; NOT_A_FRAME if it cannot be one. */
function textFrameEnd(buf: Buffer, from: number): number {
  const limit = Math.min(buf.length, from + MAX_TEXT_FRAME_BYTES);
  for (let i = from + 1; i < limit; i++) {
    const b = buf[i]!;
    if (b === TEXT_CLOSE) return i + 1;
    // A binary frame starts, or a non-printable byte: the '(' was junk.
    if (b === DELIMITER || b < 0x20 || b > 0x7e) return NOT_A_FRAME;
  }
  return limit === buf.length && limit < from + MAX_TEXT_FRAME_BYTES ? WAIT : NOT_A_FRAME;
}

/**
 * The content between the delimiters of `frame` (a 7E…7E frame that holds at least one
 * 7D), de-escaped into a new buffer. A 7D followed by anything but 01/02 is malformed.
 */
export function unescapeContent(frame: Buffer): Buffer {
  const out = Buffer.allocUnsafe(frame.length - 2);
  let n = 0;
  const last = frame.length - 1;
  for (let i = 1; i < last; i++) {
    const b = frame[i]!;
    if (b !== ESCAPE) {
      if (b === DELIMITER) throw new DecodeError('malformed', `unescaped 7e at offset ${i}`);
      out[n++] = b;
      continue;
    }
    const next = i + 1 < last ? frame[i + 1] : undefined;
    if (next === ESCAPED_DELIMITER) out[n++] = DELIMITER;
    else if (next === ESCAPED_ESCAPE) out[n++] = ESCAPE;
    else throw new DecodeError('malformed', `bad escape 7d ${next === undefined ? 'at the end' : next.toString(16).padStart(2, '0')} at offset ${i}`);
    i++;
  }
  return out.subarray(0, n);
}

/** The whole frame de-escaped, delimiters included (a copy; for tests and logs). */
export function unescapeFrame(frame: Buffer): Buffer {
  if (frame.length < 2 || frame[0] !== DELIMITER || frame[frame.length - 1] !== DELIMITER) return Buffer.from(frame);
  const content = unescapeContent(frame);
  const out = Buffer.allocUnsafe(content.length + 2);
  out[0] = DELIMITER;
  content.copy(out, 1);
  out[out.length - 1] = DELIMITER;
  return out;
}

/** Escapes `content[start, end)` for the wire and wraps it in delimiters. */
export function escapeFrame(content: Buffer, start = 0, end = content.length): Buffer {
  let extra = 0;
  for (let i = start; i < end; i++) {
    const b = content[i]!;
    if (b === DELIMITER || b === ESCAPE) extra++;
  }
  const out = Buffer.allocUnsafe(end - start + extra + 2);
  out[0] = DELIMITER;
  let n = 1;
  if (extra === 0) {
    for (let i = start; i < end; i++) out[n++] = content[i]!;
  } else {
    for (let i = start; i < end; i++) {
      const b = content[i]!;
      if (b === DELIMITER) {
        out[n++] = ESCAPE;
        out[n++] = ESCAPED_DELIMITER;
      } else if (b === ESCAPE) {
        out[n++] = ESCAPE;
        out[n++] = ESCAPED_ESCAPE;
      } else {
        out[n++] = b;
      }
    }
  }
  out[n] = DELIMITER;
  return out;
}
