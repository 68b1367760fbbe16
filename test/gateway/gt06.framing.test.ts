/**
 * GT06 framing as a server meets it: corpus frames cut at any byte, coalesced, preceded and
 * followed by junk, oversize lengths, the 15-byte login and the WiFi packets whose LEN is no
 * length. The framer never throws and accounts for every byte; the decoder throws nothing
 * but DecodeError.
 */
import { describe, expect, it } from 'vitest';
import { checkAccounting } from '../support/decoding.js';
import { toBcd } from '../../gateway/codec/bcd.js';
import { DecodeError } from '../../gateway/codec/reader.js';
import type { SessionInfo } from '../../gateway/protocol.js';
import { shortPacket } from '../../gateway/protocols/gt06/ack.js';
import { MAX_FRAME_BYTES, splitFrames } from '../../gateway/protocols/gt06/frame.js';
import { gt06 } from '../../gateway/protocols/gt06/index.js';
import { loadFrames } from '../support/conformance.js';
import { gt06Encoder, loginPacket } from '../simulator/encoders/gt06.js';
import { Route, mulberry32 } from '../simulator/route.js';

const session: SessionInfo = { imei: null, model: null, timezoneMinutes: null, frameIndex: 0, now: Date.UTC(2026, 6, 1, 12) };

const corpus = loadFrames('gt06').map((f) => ({ index: f.index, hex: f.hex, bytes: Buffer.from(f.hex, 'hex'), expected: f.expect?.frame_decoder_output }));

/** Corpus frames that are exactly one frame on the wire: all but #131 (cut before its final 0a) and #208 (three 0xFD packets). */
const wholeFrames = corpus.filter(({ bytes }) => {
  const split = splitFrames(bytes);
  return split.frames.length === 1 && split.consumed === bytes.length && split.frames[0]!.equals(bytes);
});

/** The 18-byte login of corpus #59: 78 78 0D 01 · IMEI · serial 0004 · CRC · 0D 0A. */
const LOGIN = '78780d010352887071911998000479d00d0a';
/** The 15-byte login of corpus #53: no serial, no CRC. */
const SHORT_LOGIN = '78780d0103563140414198583c0d0a';

/** Feeds reads one after another the way the server does: the unconsumed remainder, then the next read. */
function feed(reads: Buffer[]): { frames: string[]; skipped: number; pending: number } {
  let pending = Buffer.alloc(0);
  const frames: string[] = [];
  let skipped = 0;
  for (const read of reads) {
    const buf = Buffer.concat([pending, read]);
    const split = gt06.splitFrames(buf);
    checkAccounting(buf, split);
    frames.push(...split.frames.map((f) => f.toString('hex')));
    skipped += split.skipped;
    pending = buf.subarray(split.consumed);
  }
  return { frames, skipped, pending: pending.length };
}

/** Cuts a stream into reads of 1..maxRead bytes. */
function randomReads(stream: Buffer, rand: () => number, maxRead: number): Buffer[] {
  const reads: Buffer[] = [];
  for (let at = 0; at < stream.length; ) {
    const n = 1 + Math.floor(rand() * maxRead);
    reads.push(stream.subarray(at, at + n));
    at += n;
  }
  return reads;
}

/**
 * Random junk that cannot open a frame: a 78 or 79 is never followed by the same byte and
 * never ends the junk (where the next frame's first byte would complete a start marker).
 */
function junk(rand: () => number, n: number): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) {
    let b = Math.floor(rand() * 256);
    const marker = b === 0x78 || b === 0x79;
    if (marker && (i === n - 1 || out[i - 1] === b)) b = 0x00;
    out[i] = b;
  }
  return out;
}

function simulatedFrames(n: number): Buffer[] {
  const route = new Route({ seed: 6, startLat: 56.95, startLng: 24.1, startTime: Date.UTC(2026, 2, 1), harshBrakeChance: 0.2 });
  const ctx = { imei: '352098071234566', terminalId: '098071234566' };
  return [loginPacket(ctx.imei, 1), ...Array.from({ length: n }, (_, i) => gt06Encoder.encode([route.next()], { ...ctx, serial: 2 + i }))];
}

function decodeOnlyThrowsDecodeError(frame: Buffer, s: SessionInfo = session): void {
  try {
    gt06.decode(frame, s);
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
  }
}

describe('GT06 framer', () => {
  it('finds the whole corpus frames (188 of 190)', () => {
    expect(corpus).toHaveLength(190);
    expect(wholeFrames).toHaveLength(188);
    expect(corpus.filter((f) => !wholeFrames.includes(f)).map((f) => f.index)).toEqual([131, 208]);
  });

  const withExpectedOutput = corpus.filter((f) => f.expected !== undefined);

  it('has corpus frames with an expected frame decoder output', () => {
    expect(withExpectedOutput.length).toBeGreaterThanOrEqual(9);
  });

  it.each(withExpectedOutput.map((f) => [f.index, f.hex, f.expected!] as const))(
    '#%i: cuts exactly the frame the corpus expects and consumes the input',
    (_index, hex, expected) => {
      const bytes = Buffer.from(hex, 'hex');
      const split = splitFrames(bytes);
      expect(split.frames.map((f) => f.toString('hex'))).toEqual([expected]);
      expect(split.consumed).toBe(bytes.length);
      expect(split.skipped).toBe(0);
    },
  );

  it.each(wholeFrames.map((f) => [f.index, f.bytes] as const))('#%i: comes out whole when split across two reads at every byte offset', (_index, bytes) => {
    const whole = [bytes.toString('hex')];
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(feed([bytes.subarray(0, cut), bytes.subarray(cut)]), `cut at ${cut}`).toEqual({ frames: whole, skipped: 0, pending: 0 });
    }
  });

  it('splits runs of 20 consecutive corpus frames one by one, in order, in one read or in random reads', () => {
    const rand = mulberry32(20);
    for (let from = 0; from < wholeFrames.length; from += 20) {
      const run = wholeFrames.slice(from, from + 20);
      const hex = run.map((f) => f.hex);
      const stream = Buffer.concat(run.map((f) => f.bytes));
      const once = splitFrames(stream);
      expect(once.frames.map((f) => f.toString('hex')), `run from ${from}`).toEqual(hex);
      expect(once.consumed).toBe(stream.length);
      expect(once.skipped).toBe(0);
      for (let round = 0; round < 5; round++) {
        expect(feed(randomReads(stream, rand, 64)), `run from ${from}, round ${round}`).toEqual({ frames: hex, skipped: 0, pending: 0 });
      }
    }
  });

  it('splits every whole corpus frame and the simulator frames coalesced in one stream', () => {
    const all = [...wholeFrames.map((f) => f.bytes), ...simulatedFrames(60)];
    const stream = Buffer.concat(all);
    const hex = all.map((f) => f.toString('hex'));
    expect(feed([stream])).toEqual({ frames: hex, skipped: 0, pending: 0 });
    const rand = mulberry32(42);
    for (let round = 0; round < 10; round++) {
      expect(feed(randomReads(stream, rand, 300))).toEqual({ frames: hex, skipped: 0, pending: 0 });
    }
  });

  it('cuts the three long-form 0xFD packets of one corpus read (#208)', () => {
    const f = corpus.find((x) => x.hex.startsWith('7979') && splitFrames(x.bytes).frames.length === 3)!;
    expect(f.index).toBe(208);
    const split = splitFrames(f.bytes);
    expect(split.consumed).toBe(f.bytes.length);
    expect(split.skipped).toBe(0);
    expect(Buffer.concat(split.frames).equals(f.bytes)).toBe(true);
    for (const frame of split.frames) {
      expect(frame.subarray(0, 2).toString('hex')).toBe('7979');
      expect(frame[4]).toBe(0xfd);
      expect(frame.length).toBe(frame.readUInt16BE(2) + 6);
      expect(frame.subarray(-2).toString('hex')).toBe('0d0a');
    }
  });

  it('waits at the corpus frame cut before its final 0a (#131), and cuts it once the 0a arrives', () => {
    const f = corpus.find((x) => x.index === 131)!;
    expect(splitFrames(f.bytes)).toEqual({ frames: [], consumed: 0, skipped: 0 });
    expect(feed([f.bytes, Buffer.from([0x0a])]).frames).toEqual([`${f.hex}0a`]);
  });

  it('waits for the rest of a partial frame', () => {
    for (const hex of [LOGIN, simulatedFrames(1)[1]!.toString('hex')]) {
      const bytes = Buffer.from(hex, 'hex');
      for (let cut = 1; cut < bytes.length; cut++) {
        expect(splitFrames(bytes.subarray(0, cut)), `${hex.slice(0, 8)} cut at ${cut}`).toEqual({ frames: [], consumed: 0, skipped: 0 });
      }
    }
  });

  it('skips seeded random junk before, between and after frames, counts it, and loses no frame', () => {
    const rand = mulberry32(606);
    const frames = [...wholeFrames.map((f) => f.bytes), ...simulatedFrames(40)];
    const parts: Buffer[] = [];
    let junkBytes = 0;
    for (const frame of frames) {
      const j = junk(rand, Math.floor(rand() * 40));
      junkBytes += j.length;
      parts.push(j, frame);
    }
    const tail = junk(rand, 33);
    junkBytes += tail.length;
    parts.push(tail);
    const stream = Buffer.concat(parts);
    const hex = frames.map((f) => f.toString('hex'));
    expect(junkBytes).toBeGreaterThan(frames.length * 10);

    expect(feed([stream])).toEqual({ frames: hex, skipped: junkBytes, pending: 0 });
    for (let round = 0; round < 10; round++) {
      expect(feed(randomReads(stream, rand, 200)), `round ${round}`).toEqual({ frames: hex, skipped: junkBytes, pending: 0 });
    }
  });

  it('consumes junk without any start marker at once, keeping a trailing 78 or 79', () => {
    expect(splitFrames(Buffer.from('0102030d0a05', 'hex'))).toEqual({ frames: [], consumed: 6, skipped: 6 });
    expect(splitFrames(Buffer.from('01020378', 'hex'))).toEqual({ frames: [], consumed: 3, skipped: 3 });
    // The kept 79 opens a long-form header with the next read; its LEN runs into a start marker: resync there.
    expect(feed([Buffer.from('01020379', 'hex'), Buffer.from(`79000a13${LOGIN}`, 'hex')])).toEqual({ frames: [LOGIN], skipped: 3 + 5, pending: 0 });
  });

  // A junk 78 before a 78 78 frame: `78 78 78` must not be read as a header with LEN 0x78.
  it('cuts a frame preceded by a junk 78', () => {
    const stream = Buffer.from(`78${LOGIN}${LOGIN}`, 'hex');
    expect(feed([stream])).toEqual({ frames: [LOGIN, LOGIN], skipped: 1, pending: 0 });
  });

  it('does not wait on an oversize long-form length (79 79 FF FF): it skips the marker and resyncs', () => {
    // Alone: once the protocol byte is there it is junk, not a frame start to wait on.
    expect(splitFrames(Buffer.from('7979ffff01', 'hex'))).toEqual({ frames: [], consumed: 5, skipped: 5 });
    // Followed by a frame: the frame comes out, in one read or byte by byte.
    const stream = Buffer.from(`7979ffff01${LOGIN}`, 'hex');
    expect(feed([stream])).toEqual({ frames: [LOGIN], skipped: 5, pending: 0 });
    const byteByByte = Array.from(stream, (b) => Buffer.from([b]));
    expect(feed(byteByByte)).toEqual({ frames: [LOGIN], skipped: 5, pending: 0 });
    // The largest long-form LEN within the cap waits for its bytes; one more is refused at once.
    const header = (len: number): Buffer => {
      const b = Buffer.from([0x79, 0x79, 0, 0, 0x01]);
      b.writeUInt16BE(len, 2);
      return b;
    };
    expect(splitFrames(header(MAX_FRAME_BYTES - 6))).toEqual({ frames: [], consumed: 0, skipped: 0 });
    expect(splitFrames(header(MAX_FRAME_BYTES - 5))).toEqual({ frames: [], consumed: 5, skipped: 5 });
  });

  it('honours a smaller maxFrameBytes: a longer short-form frame is skipped, a following one cut', () => {
    const heartbeat = shortPacket(0x13, 7, Buffer.from([0x46, 0x06, 0x04, 0x00, 0x02]));
    expect(heartbeat).toHaveLength(15);
    const split = splitFrames(Buffer.concat([Buffer.from(LOGIN, 'hex'), heartbeat]), 16);
    expect(split.frames).toEqual([heartbeat]);
    expect(split.skipped).toBe(18);
    expect(split.consumed).toBe(18 + 15);
  });

  it('cuts the 15-byte login without serial and CRC alone in the buffer, and before another frame', () => {
    expect(splitFrames(Buffer.from(SHORT_LOGIN, 'hex'))).toEqual({ frames: [Buffer.from(SHORT_LOGIN, 'hex')], consumed: 15, skipped: 0 });
    expect(feed([Buffer.from(SHORT_LOGIN + LOGIN + SHORT_LOGIN, 'hex')])).toEqual({ frames: [SHORT_LOGIN, LOGIN, SHORT_LOGIN], skipped: 0, pending: 0 });
    const decoded = gt06.decode(Buffer.from(SHORT_LOGIN, 'hex'), session);
    expect(decoded.identity).toEqual({ imei: '356314041419858' });
  });

  it('cuts a full 18-byte login whole at every split offset, never as the 15-byte variant', () => {
    const logins = new Set([
      LOGIN,
      ...corpus.filter((f) => f.hex.startsWith('78780d01') && f.bytes.length === 18).map((f) => f.hex),
      ...[1, 0x0d0d, 0xfffe].map((serial) => shortPacket(0x01, serial, toBcd('0868935060005020', 8)).toString('hex')),
    ]);
    expect(logins.size).toBeGreaterThanOrEqual(7);
    for (const hex of logins) {
      const bytes = Buffer.from(hex, 'hex');
      expect(bytes).toHaveLength(18);
      for (let cut = 0; cut <= bytes.length; cut++) {
        expect(feed([bytes.subarray(0, cut), bytes.subarray(cut)]), `${hex} cut at ${cut}`).toEqual({ frames: [hex], skipped: 0, pending: 0 });
      }
    }
  });

  it('cuts a WiFi 0x69 packet whose LEN byte is the access-point count at its 0d0a (#52)', () => {
    const wifi = corpus.find((f) => f.index === 52)!;
    expect(wifi.hex.startsWith('787803691604')).toBe(true);
    // LEN 3 would make it an 8-byte frame.
    expect(wifi.bytes[2]! + 5).not.toBe(wifi.bytes.length);
    expect(splitFrames(wifi.bytes)).toEqual({ frames: [wifi.bytes], consumed: wifi.bytes.length, skipped: 0 });
    expect(feed([Buffer.from(wifi.hex + LOGIN + wifi.hex, 'hex')])).toEqual({ frames: [wifi.hex, LOGIN, wifi.hex], skipped: 0, pending: 0 });
    // Before its 0d0a it waits even though LEN says it is complete.
    expect(splitFrames(wifi.bytes.subarray(0, wifi.bytes.length - 1)).consumed).toBe(0);
    // Nor does it wait for LEN + 5 bytes when the AP count is larger than the packet.
    for (const proto of ['69', '17']) {
      const short = Buffer.from(`787808${proto}1604130318490d0a`, 'hex');
      expect(short.length).toBeLessThan(short[2]! + 5);
      expect(splitFrames(short)).toEqual({ frames: [short], consumed: short.length, skipped: 0 });
    }
  });
});

describe('GT06 robustness', () => {
  const sessions: SessionInfo[] = [session, { ...session, model: 'VL03', timezoneMinutes: 480, imei: '352098071234566' }];

  it('never throws from the framer, and the decoder throws only DecodeError, on 2000 random inputs', () => {
    const rand = mulberry32(606);
    const special = [0x78, 0x78, 0x79, 0x79, 0x0d, 0x0a, 0x01, 0x22, 0x16, 0x69, 0x00, 0xff];
    for (let i = 0; i < 2000; i++) {
      const length = Math.floor(rand() * 300);
      const buf = Buffer.alloc(length);
      for (let k = 0; k < length; k++) buf[k] = rand() < 0.2 ? special[Math.floor(rand() * special.length)]! : Math.floor(rand() * 256);
      if (i % 2 === 0 && length > 4) {
        buf[0] = 0x78 + (i % 4 === 0 ? 0 : 1);
        buf[1] = buf[0];
        buf[length - 2] = 0x0d;
        buf[length - 1] = 0x0a;
      }
      const split = splitFrames(buf);
      checkAccounting(buf, split);
      for (const frame of split.frames) decodeOnlyThrowsDecodeError(frame, sessions[i % 2]);
      decodeOnlyThrowsDecodeError(buf, sessions[i % 2]);
    }
  });

  it('decodes truncated and corrupted frames to DecodeError or a result, never a crash', () => {
    const rand = mulberry32(6060);
    const sources = [...wholeFrames.map((f) => f.bytes), ...simulatedFrames(20)];
    for (const frame of sources) {
      for (let cut = 1; cut < frame.length; cut++) {
        decodeOnlyThrowsDecodeError(Buffer.concat([frame.subarray(0, cut), Buffer.from('0d0a', 'hex')]));
      }
      for (let k = 0; k < 10; k++) {
        const bad = Buffer.from(frame);
        const flips = 1 + Math.floor(rand() * 3);
        for (let n = 0; n < flips; n++) bad[2 + Math.floor(rand() * (bad.length - 4))] = Math.floor(rand() * 256);
        for (const s of sessions) decodeOnlyThrowsDecodeError(bad, s);
      }
    }
  });
});
