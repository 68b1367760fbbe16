/**
 * Teltonika framing against TCP's freedom to cut and glue reads, and the decoder's
 * robustness against junk: only DecodeError may come out of decode, nothing out of
 * splitFrames.
 */
import { describe, expect, it } from 'vitest';
import { crc16Arc } from '../../gateway/codec/crc.js';
import { DecodeError } from '../../gateway/codec/reader.js';
import type { SessionInfo } from '../../gateway/protocol.js';
import { MAX_FRAME_BYTES } from '../../gateway/protocols/teltonika/frame.js';
import { teltonika } from '../../gateway/protocols/teltonika/index.js';
import { loadFrames } from '../support/conformance.js';
import { mulberry32 } from '../simulator/route.js';

const session: SessionInfo = { imei: '352098071234566', model: 'FMB130', timezoneMinutes: null, frameIndex: 0, now: Date.UTC(2026, 0, 1) };

/** Corpus TCP frames that are whole and intact: the IMEI packet and AVL packets without integrity issues. */
const validFrames = loadFrames('teltonika')
  .filter((f) => f.transport === 'tcp' && !f.integrity_issues && (f.derived?.kind === 'imei_login' || f.derived?.kind === 'avl_data'))
  .map((f) => ({ index: f.index, note: f.note ?? '', bytes: Buffer.from(f.hex, 'hex') }));

/** Feeds reads the way gateway/connection.ts does: unconsumed bytes are kept and prefixed to the next read. */
function feed(reads: Buffer[]): { frames: string[]; fatal?: string; pending: number } {
  const frames: string[] = [];
  let pending: Buffer = Buffer.alloc(0);
  for (const read of reads) {
    const buf = pending.length ? Buffer.concat([pending, read]) : read;
    const split = teltonika.splitFrames(buf);
    frames.push(...split.frames.map((f) => f.toString('hex')));
    pending = buf.subarray(split.consumed);
    if (split.fatal) return { frames, fatal: split.fatal, pending: pending.length };
  }
  return { frames, pending: pending.length };
}

/** decode may refuse, but only with a DecodeError. */
function decodeOrRefuse(frame: Buffer): void {
  try {
    teltonika.decode(frame, session);
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
  }
}

function randomBytes(rand: () => number, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

/** Rewrites the CRC field so a corrupted data field still reaches the record parser. */
function withFixedCrc(frame: Buffer): Buffer {
  const copy = Buffer.from(frame);
  if (copy.length >= 12 && copy.readUInt32BE(0) === 0) {
    const dataEnd = copy.length - 4;
    copy.writeUInt32BE(crc16Arc(copy, 8, dataEnd), dataEnd);
  }
  return copy;
}

describe('Teltonika framing', () => {
  it('has intact corpus frames to work with', () => {
    expect(validFrames.length).toBeGreaterThan(35);
  });

  it.each(validFrames.map((f) => [`#${f.index} ${f.note}`, f.bytes] as const))('%s: split at every offset yields the same frame', (_name, bytes) => {
    const whole = [bytes.toString('hex')];
    expect(feed([bytes])).toEqual({ frames: whole, pending: 0 });
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(feed([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual({ frames: whole, pending: 0 });
    }
  });

  it('yields every frame of a read holding several, keep-alives between them included', () => {
    const parts: Buffer[] = [];
    for (const f of validFrames) parts.push(Buffer.from([0xff]), f.bytes);
    const all = Buffer.concat(parts);
    const expected = validFrames.map((f) => f.bytes.toString('hex'));
    expect(feed([all])).toEqual({ frames: expected, pending: 0 });
    // Same bytes in random-sized reads.
    const rand = mulberry32(3);
    const reads: Buffer[] = [];
    for (let at = 0; at < all.length; ) {
      const n = 1 + Math.floor(rand() * 700);
      reads.push(all.subarray(at, at + n));
      at += n;
    }
    expect(feed(reads)).toEqual({ frames: expected, pending: 0 });
  });

  it('consumes keep-alive bytes without emitting them', () => {
    expect(teltonika.splitFrames(Buffer.from('ffff', 'hex'))).toEqual({ frames: [], consumed: 2, skipped: 0 });
    expect(teltonika.splitFrames(Buffer.from('ff00', 'hex'))).toEqual({ frames: [], consumed: 1, skipped: 0 });
  });

  it('waits for the rest of a partial packet', () => {
    const avl = validFrames.find((f) => f.bytes.readUInt16BE(0) === 0)!.bytes;
    for (const n of [1, 2, 3, 7, 8, 9, avl.length - 1]) {
      expect(teltonika.splitFrames(avl.subarray(0, n))).toEqual({ frames: [], consumed: 0, skipped: 0 });
    }
  });

  it('refuses an oversize AVL packet as soon as its length is in', () => {
    const header = Buffer.alloc(8);
    header.writeUInt32BE(MAX_FRAME_BYTES - 12 + 1, 4);
    expect(teltonika.splitFrames(header).fatal).toMatch(/exceeds/);
    header.writeUInt32BE(MAX_FRAME_BYTES - 12, 4);
    expect(teltonika.splitFrames(header)).toEqual({ frames: [], consumed: 0, skipped: 0 });
    header.writeUInt32BE(0xffff_ffff, 4);
    expect(teltonika.splitFrames(header).fatal).toMatch(/exceeds/);
    expect(teltonika.maxFrameBytes).toBe(MAX_FRAME_BYTES);
  });

  it('treats junk as fatal, after emitting the frames before it', () => {
    expect(teltonika.splitFrames(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')).fatal).toMatch(/not a Teltonika packet/);
    expect(teltonika.splitFrames(Buffer.from('000001', 'hex')).fatal).toMatch(/preamble/);
    expect(teltonika.splitFrames(Buffer.from('0041', 'hex')).fatal).toMatch(/IMEI length 65/);
    expect(teltonika.splitFrames(Buffer.from('0000000000000002080000', 'hex')).fatal).toMatch(/too small/);
    const good = validFrames[0]!.bytes;
    const split = teltonika.splitFrames(Buffer.concat([good, Buffer.from('0102030405', 'hex')]));
    expect(split.frames.map((f) => f.toString('hex'))).toEqual([good.toString('hex')]);
    expect(split.consumed).toBe(good.length);
    expect(split.fatal).toBeDefined();
  });
});

const CODECS = [0x07, 0x08, 0x8e, 0x10, 0x0c, 0x0d];

describe('Teltonika robustness', () => {
  it('never throws from splitFrames, nor anything but DecodeError from decode, on random bytes', () => {
    const rand = mulberry32(20260101);
    for (let i = 0; i < 2000; i++) {
      let buf = randomBytes(rand, 1 + Math.floor(rand() * 400));
      // Steer a share of the inputs down the AVL and IMEI paths of the framer.
      const shape = i % 4;
      if (shape === 1 && buf.length >= 15) {
        // A well-formed envelope (known codec, matching counts, right CRC) around random records.
        buf.writeUInt32BE(0, 0);
        buf.writeUInt32BE(buf.length - 12, 4);
        buf[8] = CODECS[i % CODECS.length]!;
        buf[9] = buf[buf.length - 5] = 1 + (i % 3);
        buf = withFixedCrc(buf);
      } else if (shape === 2 && buf.length >= 2) {
        buf.writeUInt16BE(Math.min(buf.length - 2, 64), 0);
      }
      const split = teltonika.splitFrames(buf);
      expect(split.consumed).toBeLessThanOrEqual(buf.length);
      for (const frame of split.frames) decodeOrRefuse(frame);
      decodeOrRefuse(buf);
    }
  });

  it.each(validFrames.map((f) => [`#${f.index} ${f.note}`, f.bytes] as const))('%s: truncated copies are refused, corrupted ones refused or decoded', (_name, bytes) => {
    for (let n = 0; n < bytes.length; n++) {
      expect(() => teltonika.decode(bytes.subarray(0, n), session)).toThrow(DecodeError);
    }
    const rand = mulberry32(bytes.length);
    for (let i = 0; i < 40; i++) {
      const corrupted = Buffer.from(bytes);
      const at = Math.floor(rand() * corrupted.length);
      corrupted[at] = corrupted[at]! ^ (1 + Math.floor(rand() * 255));
      decodeOrRefuse(corrupted);
      decodeOrRefuse(withFixedCrc(corrupted));
    }
  });
});
