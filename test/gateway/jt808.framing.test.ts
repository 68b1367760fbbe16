/**
 * JT/T 808 framing as a server meets it: frames cut at any byte, coalesced, preceded by
 * junk, oversize runs, ASCII sentences, random bytes. The framer never throws and always
 * accounts for every byte; the decoder throws nothing but DecodeError.
 */
import { describe, expect, it } from 'vitest';
import { checkAccounting } from '../support/decoding.js';
import { DecodeError } from '../../gateway/codec/reader.js';
import type { SessionInfo } from '../../gateway/protocol.js';
import { encodeMessage } from '../../gateway/protocols/jt808/ack.js';
import { MAX_FRAME_BYTES, MAX_TEXT_FRAME_BYTES, splitFrames } from '../../gateway/protocols/jt808/frame.js';
import { jt808 } from '../../gateway/protocols/jt808/index.js';
import { loadFrames } from '../support/conformance.js';
import { jt808Encoder } from '../simulator/encoders/jt808.js';
import { Route, mulberry32 } from '../simulator/route.js';

const session: SessionInfo = { imei: null, model: null, timezoneMinutes: null, frameIndex: 0, now: Date.UTC(2026, 0, 1) };

/** Corpus frames that are exactly one frame on the wire (all but the junk-prefixed #244 and #350 with a raw 7E). */
const wholeFrames = loadFrames('jt808')
  .map((f) => ({ index: f.index, bytes: Buffer.from(f.hex, 'hex') }))
  .filter(({ bytes }) => {
    const split = splitFrames(bytes);
    return split.frames.length === 1 && split.consumed === bytes.length && split.frames[0]!.equals(bytes);
  });

/** Feeds reads one after another the way the server does: remainder + next read. */
function feed(reads: Buffer[], maxFrameBytes = MAX_FRAME_BYTES): { frames: Buffer[]; skipped: number; pending: Buffer } {
  let pending = Buffer.alloc(0);
  const frames: Buffer[] = [];
  let skipped = 0;
  for (const read of reads) {
    const buf = Buffer.concat([pending, read]);
    const split = splitFrames(buf, maxFrameBytes);
    expect(split.fatal).toBeUndefined();
    checkAccounting(buf, split);
    for (const f of split.frames) frames.push(Buffer.from(f));
    skipped += split.skipped;
    pending = buf.subarray(split.consumed);
  }
  return { frames, skipped, pending };
}

function simulatedFrames(n: number): Buffer[] {
  const route = new Route({ seed: 3, startLat: 31.2, startLng: 121.5, startTime: Date.UTC(2026, 2, 1), harshBrakeChance: 0.2 });
  const ctx = { imei: '352098071234566', terminalId: '098071234566' };
  return Array.from({ length: n }, (_, i) =>
    jt808Encoder.encode(Array.from({ length: 1 + (i % 4) }, () => route.next()), { ...ctx, serial: 0x7d7e + i }),
  );
}

function decodeOnlyThrowsDecodeError(frame: Buffer, s: SessionInfo = session): void {
  try {
    jt808.decode(frame, s);
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
  }
}

describe('JT/T 808 framer', () => {
  it('finds the whole corpus frames (111 of 113)', () => {
    expect(wholeFrames).toHaveLength(111);
  });

  it('cuts every corpus frame the same at every byte offset across two reads', () => {
    for (const { bytes } of wholeFrames) {
      for (let cut = 0; cut <= bytes.length; cut++) {
        const { frames, skipped, pending } = feed([bytes.subarray(0, cut), bytes.subarray(cut)]);
        expect(frames.map((f) => f.toString('hex'))).toEqual([bytes.toString('hex')]);
        expect(skipped).toBe(0);
        expect(pending.length).toBe(0);
      }
    }
  });

  it('splits coalesced frames, in one read or in random reads', () => {
    const all = [...wholeFrames.map((f) => f.bytes), ...simulatedFrames(50)];
    const stream = Buffer.concat(all);
    const once = splitFrames(stream);
    expect(once.frames.map((f) => f.toString('hex'))).toEqual(all.map((f) => f.toString('hex')));
    expect(once.consumed).toBe(stream.length);
    expect(once.skipped).toBe(0);

    const rand = mulberry32(42);
    for (let round = 0; round < 20; round++) {
      const reads: Buffer[] = [];
      for (let at = 0; at < stream.length; ) {
        const n = 1 + Math.floor(rand() * 300);
        reads.push(stream.subarray(at, at + n));
        at += n;
      }
      const { frames, skipped, pending } = feed(reads);
      expect(frames).toHaveLength(all.length);
      expect(frames.every((f, i) => f.equals(all[i]!))).toBe(true);
      expect(skipped).toBe(0);
      expect(pending.length).toBe(0);
    }
  });

  it('waits for the rest of a frame', () => {
    const [frame] = simulatedFrames(1);
    const split = splitFrames(frame!.subarray(0, frame!.length - 1));
    expect(split).toEqual({ frames: [], consumed: 0, skipped: 0 });
  });

  it('skips junk before a frame and between frames', () => {
    const [a, b] = simulatedFrames(2);
    const junk = Buffer.from('2424ff00aa', 'hex');
    const { frames, skipped } = feed([Buffer.concat([junk, a!, junk, junk, b!])]);
    expect(frames.map((f) => f.toString('hex'))).toEqual([a!.toString('hex'), b!.toString('hex')]);
    expect(skipped).toBe(3 * junk.length);
  });

  it('consumes junk without any delimiter at once', () => {
    const junk = Buffer.from('0102030405', 'hex');
    expect(splitFrames(junk)).toEqual({ frames: [], consumed: 5, skipped: 5 });
  });

  it('reads 7E 7E as the end of a lost frame and the start of the next', () => {
    const [a] = simulatedFrames(1);
    // The tail of a frame whose start was lost, then a whole frame.
    const { frames, skipped } = feed([Buffer.concat([Buffer.from('0102037e', 'hex'), a!])]);
    expect(frames.map((f) => f.toString('hex'))).toEqual([a!.toString('hex')]);
    expect(skipped).toBe(4);
  });

  it('recovers after a frame whose closing 7E was lost: one garbled frame (refused), one lost, then in step', () => {
    const [a, b, c] = simulatedFrames(3);
    const { frames } = feed([Buffer.concat([Buffer.from('7e0102', 'hex'), a!, b!, c!])]);
    expect(frames[0]!.toString('hex')).toBe(`7e0102${a!.subarray(0, 1).toString('hex')}`);
    expect(() => jt808.decode(frames[0]!, session)).toThrow(DecodeError);
    expect(frames.slice(1).map((f) => f.toString('hex'))).toEqual([b!.toString('hex'), c!.toString('hex')]);
  });

  it(`caps frames at ${MAX_FRAME_BYTES} bytes: the 2019 header, a 1023-byte body and every byte escaped`, () => {
    // The largest valid frame: a 1023-byte body of 7E bytes doubles when escaped.
    const phone = Buffer.from('00000000013912345678', 'hex');
    const largest = encodeMessage(0x0900, phone, 0x7e7e, Buffer.alloc(1023, 0x7e), 1);
    expect(largest.length).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    expect(jt808.maxFrameBytes).toBe(MAX_FRAME_BYTES);
    const split = splitFrames(largest);
    expect(split.frames).toHaveLength(1);
    expect(jt808.decode(split.frames[0]!, session).ignoredReason).toMatch(/transparent/);
  });

  it('drops an oversize run and resyncs on the next 7E', () => {
    const [a] = simulatedFrames(1);
    const filler = Buffer.alloc(MAX_FRAME_BYTES + 10, 0x11);
    // Unterminated: waits while it could still be a frame, drops it once it cannot.
    expect(splitFrames(Buffer.concat([Buffer.from([0x7e]), filler.subarray(0, 100)])).consumed).toBe(0);
    const open = feed([Buffer.concat([Buffer.from([0x7e]), filler]), a!]);
    expect(open.frames.map((f) => f.toString('hex'))).toEqual([a!.toString('hex')]);
    expect(open.skipped).toBe(1 + filler.length);
    // Terminated but too long: dropped up to its closing 7E, which may open the next frame.
    const closed = feed([Buffer.concat([Buffer.from([0x7e]), filler, Buffer.from([0x7e]), a!])]);
    expect(closed.frames.map((f) => f.toString('hex'))).toEqual([a!.toString('hex')]);
    expect(closed.skipped).toBe(1 + filler.length + 1);
  });

  it('honours a smaller maxFrameBytes', () => {
    const [a] = simulatedFrames(1);
    const { frames, skipped } = feed([a!], a!.length - 1);
    expect(frames).toHaveLength(0);
    expect(skipped).toBe(a!.length - 1);
  });

  it('cuts ASCII ( … ) sentences, skips a stray (, and waits for an unfinished sentence', () => {
    const [a] = simulatedFrames(1);
    const sentence = Buffer.from('(740190311185,1,001,ELOCK,3,529439)', 'latin1');
    const { frames, skipped } = feed([Buffer.concat([sentence, Buffer.from('(\x01', 'latin1'), a!, sentence])]);
    expect(frames.map((f) => f.toString('hex'))).toEqual([sentence, a!, sentence].map((f) => f.toString('hex')));
    expect(skipped).toBe(2);
    expect(splitFrames(sentence.subarray(0, 10))).toEqual({ frames: [], consumed: 0, skipped: 0 });
    const long = Buffer.from(`(${'1'.repeat(MAX_TEXT_FRAME_BYTES)})`, 'latin1');
    const tooLong = splitFrames(long);
    expect(tooLong.frames).toHaveLength(0);
    expect(tooLong.consumed).toBe(long.length);
  });
});

describe('JT/T 808 robustness', () => {
  const sessions: SessionInfo[] = [session, { ...session, model: 'JC371', timezoneMinutes: -240, frameIndex: 70_000 }];

  it('never throws from the framer, and the decoder throws only DecodeError, on 2000 random inputs', () => {
    const rand = mulberry32(808);
    const special = [0x7e, 0x7d, 0x28, 0x29, 0x01, 0x02, 0x02, 0x00];
    for (let i = 0; i < 2000; i++) {
      const length = Math.floor(rand() * 300);
      const buf = Buffer.alloc(length);
      for (let k = 0; k < length; k++) buf[k] = rand() < 0.15 ? special[Math.floor(rand() * special.length)]! : Math.floor(rand() * 256);
      if (i % 2 === 0 && length > 1) {
        buf[0] = 0x7e;
        buf[length - 1] = 0x7e;
      }
      const split = splitFrames(buf);
      checkAccounting(buf, split);
      for (const frame of split.frames) decodeOnlyThrowsDecodeError(frame, sessions[i % 2]);
      decodeOnlyThrowsDecodeError(buf, sessions[i % 2]);
    }
  });

  it('decodes truncated and corrupted frames to DecodeError or a result, never a crash', () => {
    const rand = mulberry32(1078);
    const sources = [...wholeFrames.map((f) => f.bytes), ...simulatedFrames(40)];
    for (const frame of sources) {
      for (let cut = 1; cut < frame.length; cut++) {
        decodeOnlyThrowsDecodeError(Buffer.concat([frame.subarray(0, cut), Buffer.from([0x7e])]));
      }
      for (let k = 0; k < 20; k++) {
        const bad = Buffer.from(frame);
        const flips = 1 + Math.floor(rand() * 3);
        for (let n = 0; n < flips; n++) bad[1 + Math.floor(rand() * (bad.length - 2))] = Math.floor(rand() * 256);
        for (const s of sessions) decodeOnlyThrowsDecodeError(bad, s);
        for (const piece of splitFrames(bad).frames) decodeOnlyThrowsDecodeError(piece);
      }
    }
  });

  it('refuses a corrupted frame with a check-code error (and a message-error reply), not a wrong record', () => {
    const [frame] = simulatedFrames(1);
    const bad = Buffer.from(frame!);
    bad[20] = bad[20]! ^ 0x01;
    expect(() => jt808.decode(bad, session)).toThrow(expect.objectContaining({ code: 'bad_checksum' }));
  });

  it('refuses bad escapes and stray delimiters as malformed', () => {
    const [frame] = simulatedFrames(1);
    const hex = frame!.toString('hex');
    const badEscape = Buffer.from(`${hex.slice(0, 10)}7d03${hex.slice(10)}`, 'hex');
    expect(() => jt808.decode(badEscape, session)).toThrow(expect.objectContaining({ code: 'malformed' }));
    const strayDelimiter = Buffer.from(`${hex.slice(0, 10)}7e${hex.slice(10)}`, 'hex');
    expect(() => jt808.decode(strayDelimiter, session)).toThrow(expect.objectContaining({ code: 'malformed' }));
    expect(() => jt808.decode(Buffer.from('7e7d7e', 'hex'), session)).toThrow(expect.objectContaining({ code: 'malformed' }));
    expect(() => jt808.decode(Buffer.alloc(0), session)).toThrow(DecodeError);
  });
});
