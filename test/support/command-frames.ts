/**
 * Checks the command suites of the three protocols share: a frame cut at every byte offset
 * still comes out of the framer whole, and reply decoders fed random or mutated bytes throw
 * nothing but DecodeError.
 */
import { expect } from 'vitest';
import { DecodeError } from '../../gateway/codec/reader.js';
import type { Decoded, ProtocolModule, SessionInfo } from '../../gateway/protocol.js';
import { mulberry32 } from '../simulator/route.js';

export const COMMAND_SESSION: SessionInfo = { imei: null, model: null, timezoneMinutes: null, frameIndex: 0, now: Date.UTC(2026, 0, 1) };

/** Feeds `frame` as two reads cut at every offset, keeping unconsumed bytes as the connection does. */
export function expectWholeAtEveryCut(protocol: ProtocolModule, frame: Buffer): void {
  for (let cut = 0; cut <= frame.length; cut++) {
    const frames: string[] = [];
    let pending: Buffer = Buffer.alloc(0);
    for (const read of [frame.subarray(0, cut), frame.subarray(cut)]) {
      const buf = pending.length > 0 ? Buffer.concat([pending, read]) : read;
      const split = protocol.splitFrames(buf);
      expect(split.fatal, `cut at ${cut}`).toBeUndefined();
      frames.push(...split.frames.map((f) => f.toString('hex')));
      pending = Buffer.from(buf.subarray(split.consumed));
    }
    expect(frames, `cut at ${cut}`).toEqual([frame.toString('hex')]);
    expect(pending.length, `cut at ${cut}`).toBe(0);
  }
}

/** decode, or its DecodeError; any other exception fails the caller's test. */
export function decodeOrRefusal(protocol: ProtocolModule, frame: Buffer, session: SessionInfo = COMMAND_SESSION): Decoded | DecodeError {
  try {
    return protocol.decode(frame, session);
  } catch (err) {
    if (err instanceof DecodeError) return err;
    throw err;
  }
}

/**
 * Random byte flips, truncations and random bytes behind a valid head, `rounds` times from
 * each seed; `repair` fixes the checksum so the mutated body reaches the reply parser.
 * Returns how many mutants decoded (the caller checks some did, so the fuzz is not all refusals).
 */
export function fuzzDecoder(protocol: ProtocolModule, seeds: Buffer[], repair: (frame: Buffer) => Buffer, rounds = 300, seed = 55): number {
  const rand = mulberry32(seed);
  let decoded = 0;
  for (const original of seeds) {
    for (let i = 0; i < rounds; i++) {
      const candidateBase = i % 3 === 2 ? randomTail(original, rand) : flipped(original, rand);
      const cut = rand() < 0.3 ? candidateBase.subarray(0, Math.floor(rand() * candidateBase.length)) : candidateBase;
      for (const candidate of [cut, repair(cut)]) {
        const result = decodeOrRefusal(protocol, candidate);
        if (!(result instanceof DecodeError)) {
          decoded += 1;
          for (const reply of result.replies) expect(typeof reply.outcome).toBe('string');
        }
      }
    }
  }
  return decoded;
}

/** 1-3 bytes anywhere set to random values. */
function flipped(original: Buffer, rand: () => number): Buffer {
  const mutant = Buffer.from(original);
  const flips = 1 + Math.floor(rand() * 3);
  for (let f = 0; f < flips; f++) mutant[Math.floor(rand() * mutant.length)] = Math.floor(rand() * 256);
  return mutant;
}

/** The first bytes of a real frame (its head, up to 12), then random bytes, up to twice its length. */
function randomTail(original: Buffer, rand: () => number): Buffer {
  const head = original.subarray(0, Math.min(original.length, 1 + Math.floor(rand() * 12)));
  const tail = Buffer.alloc(Math.floor(rand() * original.length * 2));
  for (let i = 0; i < tail.length; i++) tail[i] = Math.floor(rand() * 256);
  return Buffer.concat([head, tail]);
}
