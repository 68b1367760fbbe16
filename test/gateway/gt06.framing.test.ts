/** GT06 framing: whole frames out of any split of the byte stream, junk skipped, nothing lost. */
import { describe, expect, it } from 'vitest';
import { splitFrames } from '../../gateway/protocols/gt06/frame.js';
import { mulberry32 } from '../simulator/route.js';
import { loadFrames } from '../support/conformance.js';

const corpus = loadFrames('gt06');

/** Feeds chunks the way a connection does: unconsumed bytes stay and the next chunk is appended. */
function feed(chunks: Buffer[]): { frames: string[]; skipped: number; left: number } {
  let pending = Buffer.alloc(0);
  const frames: string[] = [];
  let skipped = 0;
  for (const chunk of chunks) {
    pending = Buffer.concat([pending, chunk]);
    const split = splitFrames(pending);
    frames.push(...split.frames.map((f) => f.toString('hex')));
    skipped += split.skipped;
    pending = pending.subarray(split.consumed);
  }
  return { frames, skipped, left: pending.length };
}

/** Corpus frames that are exactly one frame on their own (not #131, cut before its 0a; not the three 0xFD in one read). */
const single = corpus.filter((f) => {
  const bytes = Buffer.from(f.hex, 'hex');
  const split = splitFrames(bytes);
  return split.frames.length === 1 && split.consumed === bytes.length;
});

describe('GT06 framing', () => {
  it('cuts 188 of the 190 corpus frames whole when each arrives alone', () => {
    expect(single).toHaveLength(188);
  });

  it.each(single.map((f) => [f.index, f.hex] as const))('#%i comes out whole from a split at every byte offset', (_i, hex) => {
    const bytes = Buffer.from(hex, 'hex');
    for (let at = 1; at < bytes.length; at++) {
      const out = feed([bytes.subarray(0, at), bytes.subarray(at)]);
      expect(out.frames, `split at ${at}`).toEqual([hex]);
      expect(out.left).toBe(0);
    }
  });

  it('splits coalesced frames in order, also when they arrive in random pieces', () => {
    const frames = single.slice(20, 60).map((f) => f.hex);
    const stream = Buffer.from(frames.join(''), 'hex');
    expect(feed([stream]).frames).toEqual(frames);
    const random = mulberry32(5);
    const chunks: Buffer[] = [];
    for (let at = 0; at < stream.length; ) {
      const n = 1 + Math.floor(random() * 40);
      chunks.push(stream.subarray(at, at + n));
      at += n;
    }
    expect(feed(chunks).frames).toEqual(frames);
  });

  it('splits the three 0xFD packets that arrive in one read', () => {
    const f = corpus.find((x) => x.hex.startsWith('7979') && splitFrames(Buffer.from(x.hex, 'hex')).frames.length === 3)!;
    const split = splitFrames(Buffer.from(f.hex, 'hex'));
    expect(split.frames.map((x) => x[4])).toEqual([0xfd, 0xfd, 0xfd]);
    expect(split.consumed).toBe(f.hex.length / 2);
  });

  it('skips junk before, between and after frames and counts it', () => {
    const a = single.find((f) => f.hex.startsWith('78781f12'))!.hex;
    const b = single.find((f) => f.hex.startsWith('78780a13'))!.hex;
    // Junk without start markers or 0d0a, so it cannot be mistaken for a frame.
    const junk = (n: number): string => 'a5'.repeat(n);
    const out = feed([Buffer.from(junk(7) + a + junk(3) + b + junk(5), 'hex')]);
    expect(out.frames).toEqual([a, b]);
    expect(out.skipped + out.left).toBe(15);
  });

  it('survives random bytes: never throws, and frames after the noise still come out', () => {
    const random = mulberry32(9);
    const noise = Buffer.from(Array.from({ length: 5000 }, () => Math.floor(random() * 256)));
    const login = '78780d01012345678901234500018cdd0d0a';
    const out = feed([noise, Buffer.from('0d0a' + login, 'hex')]);
    expect(out.frames.at(-1)).toBe(login);
  });

  it('does not wait for an oversize length: it resyncs on the next start', () => {
    const login = '78780d01012345678901234500018cdd0d0a';
    const out = feed([Buffer.from('7979ffff01' + login, 'hex')]);
    expect(out.frames).toEqual([login]);
    expect(out.skipped).toBe(5);
  });

  it('waits for the rest of a partial frame', () => {
    const split = splitFrames(Buffer.from('78780d0101234567', 'hex'));
    expect(split.frames).toHaveLength(0);
    expect(split.consumed).toBe(0);
  });

  it('cuts the 15-byte login without serial and CRC alone in the buffer', () => {
    const short = '78780d0103563140414198583c0d0a';
    expect(feed([Buffer.from(short, 'hex')]).frames).toEqual([short]);
  });

  it('cuts a WiFi packet whose LEN byte is the access-point count at its 0d0a', () => {
    const wifi = corpus.find((f) => f.index === 52)!.hex;
    const login = '78780d01012345678901234500018cdd0d0a';
    expect(feed([Buffer.from(wifi + login, 'hex')]).frames).toEqual([wifi, login]);
  });
});
