/**
 * Checks the protocol suites share: refusals, framer accounting, sane records,
 * the position facts of the conformance corpus, and the outcome each corpus
 * frame is recorded to have (so a decoder change cannot move a frame silently).
 */
import { expect } from 'vitest';
import { DecodeError } from '../../gateway/codec/reader.js';
import type { Decoded, DecodedRecord, FrameSplit } from '../../gateway/protocol.js';
import type { ConformanceFrame } from './conformance.js';
import { thrown } from './thrown.js';

/** The DecodeError a decode throws (any other error, or none, fails the test). */
export function refusal(decode: () => unknown): DecodeError {
  return thrown(DecodeError, decode);
}

/**
 * For the framers that resync on a delimiter (GT06, JT/T 808): every byte up to
 * `consumed` is in a frame or counted as skipped, and framing never becomes fatal.
 */
export function checkAccounting(buf: Buffer, split: FrameSplit): void {
  const inFrames = split.frames.reduce((n, f) => n + f.length, 0);
  expect(split.consumed).toBeLessThanOrEqual(buf.length);
  expect(inFrames + split.skipped).toBe(split.consumed);
  expect(split.fatal).toBeUndefined();
}

/** What any decoded record must be: a real time, and coordinates on the globe when it has them. */
export function checkRecordsSane(records: DecodedRecord[]): void {
  for (const r of records) {
    expect(Number.isFinite(r.fixTime)).toBe(true);
    if (r.lat !== null) expect(Math.abs(r.lat)).toBeLessThanOrEqual(90);
    if (r.lng !== null) expect(Math.abs(r.lng)).toBeLessThanOrEqual(180);
  }
}

/** The reference implementation's position facts for a frame, against the record it asserted on. */
export function checkPosition(record: DecodedRecord | undefined, position: NonNullable<ConformanceFrame['expect']>['position']): void {
  if (!position) return;
  expect(record, 'a record with the corpus position').toBeDefined();
  if (position.time !== undefined) expect(record!.fixTime).toBe(Date.parse(position.time));
  if (position.valid !== undefined) expect(record!.valid).toBe(position.valid);
  if (position.lat !== undefined) expect(record!.lat).toBeCloseTo(position.lat, 5);
  if (position.lon !== undefined) expect(record!.lng).toBeCloseTo(position.lon, 5);
}

// ---------------------------------------------------------------------------
// Recorded outcomes

/**
 * What a decoder made of a frame: records; nothing but an identity (login,
 * registration); a frame understood and deliberately not stored (with its
 * reason); nothing at all (a keep-alive); or a refusal with its code.
 */
export type Outcome = 'records' | 'identity' | 'ignored' | 'nothing' | `refused:${DecodeError['code']}`;

/** Frames of the corpus with the same recorded outcome, and why they have it. */
export interface RecordedOutcome {
  outcome: Outcome;
  why: string;
  /** For ignored frames: what the decoder's reason must say. */
  reason?: RegExp;
  frames: number[];
}

/** Frame index -> its recorded outcome; every frame of `frames` must be recorded exactly once. */
export function outcomesByFrame<T extends RecordedOutcome>(table: readonly T[], frames: ReadonlyArray<{ index: number }>): Map<number, T> {
  const byFrame = new Map<number, T>();
  for (const entry of table) {
    for (const index of entry.frames) {
      if (byFrame.has(index)) throw new Error(`frame #${index} is recorded twice`);
      byFrame.set(index, entry);
    }
  }
  const corpus = new Set(frames.map((f) => f.index));
  const unknown = [...byFrame.keys()].filter((i) => !corpus.has(i));
  if (unknown.length > 0) throw new Error(`recorded frames not in the corpus: ${unknown.join(', ')}`);
  const missing = [...corpus].filter((i) => !byFrame.has(i));
  if (missing.length > 0) throw new Error(`corpus frames without a recorded outcome: ${missing.join(', ')}`);
  return byFrame;
}

/** Runs a decode and names its outcome; `decoded` is set unless it was refused. */
export function observe(decode: () => Decoded): { outcome: Outcome; decoded: Decoded | null; error: DecodeError | null } {
  let decoded: Decoded;
  try {
    decoded = decode();
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    return { outcome: `refused:${err.code}`, decoded: null, error: err };
  }
  const outcome: Outcome =
    decoded.records.length > 0 ? 'records' : decoded.ignoredReason !== undefined ? 'ignored' : decoded.identity ? 'identity' : 'nothing';
  return { outcome, decoded, error: null };
}

/** The decode had the outcome recorded for its frame (and the recorded reason, when it ignored the frame). */
export function checkOutcome(recorded: RecordedOutcome, seen: ReturnType<typeof observe>): void {
  expect(seen.outcome, recorded.why).toBe(recorded.outcome);
  if (recorded.reason) expect(seen.decoded?.ignoredReason, recorded.why).toMatch(recorded.reason);
}
