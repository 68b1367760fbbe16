/**
 * Teltonika TCP framing. The stream carries three things, none delimited:
 *   - a lone 0xFF keep-alive byte (any time, even before the IMEI packet);
 *   - the IMEI packet: u16 length (non-zero) + ASCII IMEI;
 *   - AVL packets: 4 zero bytes, u32 data length N, N data bytes, 4-byte CRC field (N + 12 in all).
 * Without delimiters there is nothing to resync on, so anything else is fatal.
 */
import type { FrameSplit } from '../../protocol.js';

/**
 * Largest frame accepted. N is a u32, so without a cap one bad length would pin up to 4 GiB
 * of pending input. 64 KiB holds a full packet of 255 codec 8E records with rich IO
 * (~250 B each) and is 30x the largest corpus frame (a 2 KiB camera chunk).
 */
export const MAX_FRAME_BYTES = 64 * 1024;

/** An IMEI is 15 digits; anything past this is not an IMEI packet but junk. */
export const MAX_IMEI_PACKET_LENGTH = 64;

/** Codec id + N1 + N2: no AVL data field can be shorter. */
export const MIN_AVL_DATA_LENGTH = 3;

export const KEEP_ALIVE = 0xff;

/** Bytes around the data field of an AVL packet: preamble, length, CRC field. */
export const AVL_OVERHEAD = 12;

/**
 * Cuts whole IMEI and AVL packets off the front of `buf`. Keep-alive bytes are consumed
 * but not emitted: a frame before login closes the connection, and 0xFF may precede the
 * IMEI packet in the same read (the corpus frame-decoder case `ff000f…`). The socket's
 * idle timer already counts them as activity.
 */
export function splitFrames(buf: Buffer, maxFrameBytes = MAX_FRAME_BYTES): FrameSplit {
  const frames: Buffer[] = [];
  let at = 0;
  for (;;) {
    while (at < buf.length && buf[at] === KEEP_ALIVE) at++;
    const remaining = buf.length - at;
    if (remaining < 2) break;

    const imeiLength = buf.readUInt16BE(at);
    if (imeiLength !== 0) {
      if (imeiLength > MAX_IMEI_PACKET_LENGTH) return fatal(frames, at, `not a Teltonika packet (IMEI length ${imeiLength})`);
      if (remaining < 2 + imeiLength) break;
      frames.push(buf.subarray(at, at + 2 + imeiLength));
      at += 2 + imeiLength;
      continue;
    }

    // Fail on a non-zero preamble byte as soon as it arrives, not when 8 bytes are in.
    for (let i = 2; i < 4 && i < remaining; i++) {
      if (buf[at + i] !== 0) return fatal(frames, at, 'non-zero AVL preamble');
    }
    if (remaining < 8) break;
    const dataLength = buf.readUInt32BE(at + 4);
    if (dataLength < MIN_AVL_DATA_LENGTH) return fatal(frames, at, `AVL data length ${dataLength} too small`);
    const total = dataLength + AVL_OVERHEAD;
    if (total > maxFrameBytes) return fatal(frames, at, `AVL packet of ${total} bytes exceeds ${maxFrameBytes}`);
    if (remaining < total) break;
    frames.push(buf.subarray(at, at + total));
    at += total;
  }
  return { frames, consumed: at, skipped: 0 };
}

function fatal(frames: Buffer[], consumed: number, reason: string): FrameSplit {
  return { frames, consumed, skipped: 0, fatal: reason };
}
