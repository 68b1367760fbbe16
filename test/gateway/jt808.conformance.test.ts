/**
 * Every JT/T 808 corpus frame against our framer and decoder. Facts come from the corpus
 * (what Traccar asserted, in Traccar's names and units), mapped onto ours through the
 * tables below. What becomes of each frame (records, identity, ignored with a reason, refused
 * with a code) is recorded in OUTCOMES, by hand from our policy (README.md: bad check code or
 * body length -> DecodeError with a 0x8001 "message error"): a decoder change that moves a
 * frame fails here and shows in the table's diff.
 */
import { describe, expect, it } from 'vitest';
import type { DeviceAlarmKind } from '../../core/alarms.js';
import { xor8 } from '../../gateway/codec/crc.js';
import type { Decoded, DecodedRecord, SessionInfo } from '../../gateway/protocol.js';
import { decode } from '../../gateway/protocols/jt808/decode.js';
import { escapeFrame, splitFrames, unescapeFrame } from '../../gateway/protocols/jt808/frame.js';
import { identityOf } from '../../gateway/protocols/jt808/identity.js';
import { jt808 } from '../../gateway/protocols/jt808/index.js';
import { KNOTS_TO_KMH, loadFrames, type ConformanceFrame } from '../support/conformance.js';
import { checkOutcome, checkPosition, checkRecordsSane, observe, outcomesByFrame, refusal, type RecordedOutcome } from '../support/decoding.js';

const NOW = Date.UTC(2026, 6, 1, 12, 0, 0);
const frames = loadFrames('jt808');

function sessionFor(f: ConformanceFrame, overrides: Partial<SessionInfo> = {}): SessionInfo {
  // frameIndex 0: the corpus' typical replies assume server serial 0000.
  return { imei: null, model: f.context?.device_model ?? null, timezoneMinutes: null, frameIndex: 0, now: NOW, ...overrides };
}

const bytesOf = (f: ConformanceFrame): Buffer => Buffer.from(f.hex, 'hex');
const isText = (wire: Buffer): boolean => wire[0] === 0x28;

/** The message id as the frame's de-escaped bytes state it (no decoder involved). */
function msgIdOf(wire: Buffer): number | null {
  const frame = frameToDecode(wire);
  if (isText(frame) || frame.length < 4) return null;
  const content = frame.subarray(1, -1).includes(0x7e) ? frame : unescapeFrame(frame);
  return content.readUInt16BE(1);
}

// ---------------------------------------------------------------------------
// What becomes of each frame

/** Every JT/T 808 corpus frame, by outcome: recorded by hand from README.md, not computed by the decoder's rules. */
const OUTCOMES: RecordedOutcome[] = [
  {
    outcome: 'records',
    why: 'a location report 0x0200, a batch 0x0704, a driver card 0x0702 or a vendor 0x0210 location',
    frames: [
      245, 246, 247, 248, 250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260, 262, 264, 265, 268, 269, 270, 271, 272, 273,
      274, 275, 279, 280, 282, 284, 285, 286, 287, 290, 291, 292, 293, 294, 295, 297, 300, 301, 302, 303, 305, 306, 307, 308,
      309, 314, 315, 316, 317, 318, 319, 320, 321, 322, 323, 324, 325, 333, 334, 336, 337, 338, 339, 340, 344, 345, 346, 347,
      348, 349, 352,
    ],
  },
  {
    outcome: 'identity',
    why: 'registration 0x0100, authentication 0x0102 or heartbeat 0x0002: the terminal is named and answered, nothing to store',
    frames: [249, 281, 299, 326, 327, 328, 329, 331, 332, 335],
  },
  { outcome: 'ignored', reason: /^e-lock text sentence \(/, why: 'an e-lock text sentence "( ... )": nothing to store', frames: [242, 296] },
  {
    outcome: 'ignored',
    reason: /^transparent data type 0x[0-9a-f]{2} \(vendor payload, not interpreted\)$/,
    why: 'transparent uplink 0x0900: a vendor payload',
    frames: [263, 266, 283, 289, 298, 354],
  },
  {
    outcome: 'ignored',
    reason: /^vendor e-lock location 0x550[12]: layout not supported/,
    why: 'e-lock locations 0x5501/0x5502: a vendor layout we do not read',
    frames: [276, 278, 288, 310, 312, 313],
  },
  {
    outcome: 'ignored',
    reason: /^(waybill\/command reply|text reply|text report|terminal attributes): /,
    why: 'text the terminal sends back (command replies 0x0701/0x1300, text report 0x6006, attributes 0x0107): kept in the reason',
    frames: [261, 267, 311, 342],
  },
  {
    outcome: 'ignored',
    reason: /vendor 0x(2070|0210|1007)\b/,
    why: 'vendor data we do not store: accelerometer samples 0x2070, battery status 0x0210, time zone sync 0x1007',
    frames: [304, 341, 343],
  },
  { outcome: 'refused:truncated', why: 'content too short for a header', frames: [243, 244] },
  { outcome: 'refused:bad_checksum', why: 'check code mismatch (edited test frames)', frames: [277, 330, 351] },
  { outcome: 'refused:malformed', why: 'a raw 7E inside the frame (#350, kept de-escaped by the corpus)', frames: [350] },
  { outcome: 'refused:bad_length', why: 'the body length field does not match the body', frames: [353] },
];

const OUTCOME = outcomesByFrame(OUTCOMES, frames);
const recordedFor = (f: { index: number }) => OUTCOME.get(f.index)!;
const isRefused = (f: { index: number }) => recordedFor(f).outcome.startsWith('refused:');

/**
 * The frame the decoder is given: the one frame our framer cuts from the wire bytes. A corpus
 * frame that is not one frame on the wire (#350 holds a raw 7E) goes to the decoder whole,
 * as Traccar's decoder test fed it.
 */
function frameToDecode(wire: Buffer): Buffer {
  const split = splitFrames(wire);
  return split.frames.length === 1 ? split.frames[0]! : wire;
}

// ---------------------------------------------------------------------------
// Traccar attribute -> our name

type Mapping =
  /** A DecodedRecord field. */
  | { to: 'field'; name: keyof DecodedRecord }
  /** One of our attributes, same value. */
  | { to: 'attribute'; name: string }
  /** A status-flag bit in our `status_flags` attribute. */
  | { to: 'status_bit'; bit: number }
  /** Text we do not store: it shows in `ignoredReason`. */
  | { to: 'reason' }
  /** Outside our model, or read by Traccar from a vendor layout we do not interpret: kept raw. */
  | { to: 'raw'; why: string };

const VENDOR = { to: 'raw', why: 'vendor item or message layout (kept as item_0xNN hex / ignoredReason)' } as const;

/** Keyed by Traccar name, or `name@0xMSGID` when the message decides. */
const ATTRIBUTES: Record<string, Mapping> = {
  sat: { to: 'field', name: 'satellites' },
  videoAlarm: { to: 'attribute', name: 'video_alarm' },
  timezone: { to: 'attribute', name: 'timezone' },
  cardCode: { to: 'attribute', name: 'driver_card_code' },
  alarmLabel: { to: 'attribute', name: 'adas_alarm_label' },
  result: { to: 'reason' },
  'iccid@0x0107': { to: 'reason' },
  door: { to: 'status_bit', bit: 16 },
  iccid: VENDOR,
  power: VENDOR,
  battery: VENDOR,
  batteryLevel: VENDOR,
  motion: VENDOR,
  charge: VENDOR,
  rpm: VENDOR,
  fuelUsed: VENDOR,
  fuel1: VENDOR,
  fuel2: VENDOR,
  temp1: VENDOR,
  temp3: VENDOR,
  tire1Pressure: VENDOR,
  driverUniqueId: VENDOR,
  driver: VENDOR,
  dtcs: VENDOR,
  event: VENDOR,
  unlockResult: VENDOR,
  tilt: VENDOR,
  lock1Locked: VENDOR,
  lock2Battery: VENDOR,
  steps: VENDOR,
  imei: VENDOR,
  tag1Mac: VENDOR,
  deviceTemp: VENDOR,
};

/**
 * Traccar alarm names: the standard alarm bits that carry them and our kind, if we have one.
 * When the corpus' alarm flags hold none of the bits, Traccar read the alarm from a vendor item.
 */
const ALARMS: Record<string, { bits: number[]; kind?: DeviceAlarmKind }> = {
  sos: { bits: [0], kind: 'event.sos' },
  overspeed: { bits: [1], kind: 'event.overspeed' },
  fatigueDriving: { bits: [2], kind: 'alarm.dsm.fatigue' },
  lowBattery: { bits: [7, 18] },
  tampering: { bits: [16, 17] },
  movement: { bits: [16, 28] },
  removing: { bits: [] },
  vibration: { bits: [15] },
  door: { bits: [] },
  hardAcceleration: { bits: [] },
};

/** Vendor data we did not interpret is not lost: a raw item on a record, or a reason on an ignored frame. */
function keptRaw(decoded: Decoded): boolean {
  if (decoded.ignoredReason !== undefined) return true;
  return decoded.records.some((r) => Object.keys(r.attributes).some((k) => k.startsWith('item_0x') || k === 'items_unparsed'));
}

function mappingFor(name: string, msgId: number | null): Mapping {
  const id = msgId === null ? null : `0x${msgId.toString(16).padStart(4, '0')}`;
  const mapping = (id && ATTRIBUTES[`${name}@${id}`]) ?? ATTRIBUTES[name];
  if (!mapping) throw new Error(`no mapping for Traccar attribute ${name}`);
  return mapping;
}

function checkAttribute(f: ConformanceFrame, decoded: Decoded, name: string, value: unknown): void {
  const msgId = msgIdOf(bytesOf(f));
  if (name === 'alarm') return checkAlarms(f, decoded, String(value));
  const mapping = mappingFor(name, msgId);
  const record = decoded.records[0];
  switch (mapping.to) {
    case 'field':
      expect(record, `${name}: a record`).toBeDefined();
      if (value === null) expect(record![mapping.name]).toBeNull();
      else expect(record![mapping.name]).toEqual(value);
      return;
    case 'attribute':
      expect(record, `${name}: a record`).toBeDefined();
      if (value === null) expect(record!.attributes).not.toHaveProperty(mapping.name);
      else expect(record!.attributes[mapping.name]).toEqual(value);
      return;
    case 'status_bit':
      expect(record, `${name}: a record`).toBeDefined();
      expect(((record!.attributes.status_flags as number) >>> mapping.bit) & 1).toBe(value ? 1 : 0);
      return;
    case 'reason':
      expect(decoded.ignoredReason).toContain(String(value));
      return;
    case 'raw':
      expect(keptRaw(decoded), `${name} (${mapping.why})`).toBe(true);
      return;
  }
}

function checkAlarms(f: ConformanceFrame, decoded: Decoded, names: string): void {
  const corpusFlags = parseInt(String(f.derived?.alarm_flags ?? '0'), 16);
  for (const name of names.split(',')) {
    const entry = ALARMS[name];
    if (!entry) throw new Error(`no mapping for Traccar alarm ${name}`);
    const bit = entry.bits.find((b) => ((corpusFlags >>> b) & 1) === 1);
    if (bit === undefined) {
      expect(keptRaw(decoded), `alarm ${name} comes from a vendor item`).toBe(true);
      continue;
    }
    const record = decoded.records[0]!;
    expect(((record.attributes.alarm_flags as number) >>> bit) & 1).toBe(1);
    if (entry.kind && !['G-360P', 'G-508P', 'AL300', 'GL100'].includes(f.context?.device_model ?? '')) {
      expect(record.alarms.map((a) => a.kind)).toContain(entry.kind);
    }
  }
}

/** Messages that carry locations: they must yield records, the rest may be ignored with a reason. */
const LOCATION_MESSAGES = new Set([0x0200, 0x0201, 0x0704]);

/** The standard's alarm bits cleared only by the platform's 0x8203: 0, 3, 20, 21, 22, 27, 28. */
const LATCHED_BITS = [0, 3, 20, 21, 22, 27, 28];
function latchedInCorpus(f: ConformanceFrame): boolean {
  const flags = Number(f.derived?.alarm_flags ?? 0);
  return LATCHED_BITS.some((bit) => ((flags >>> bit) & 1) === 1);
}

/** JT/T 808 records on top of the shared checks: each keeps at least its 28-byte basic location block. */
function checkJt808Records(records: DecodedRecord[]): void {
  checkRecordsSane(records);
  for (const r of records) expect(r.raw.length).toBeGreaterThanOrEqual(28);
}

// ---------------------------------------------------------------------------

describe('JT/T 808 corpus', () => {
  it('has the 113 frames this suite was written for', () => {
    expect(frames).toHaveLength(113);
  });

  for (const f of frames) {
    it(`#${f.index} ${f.note ?? ''}`, () => {
      const wire = bytesOf(f);
      const expectFacts = f.expect ?? {};
      const session = sessionFor(f);

      if (expectFacts.frame_decoder_output !== undefined) {
        const split = splitFrames(wire);
        expect(split.frames).toHaveLength(1);
        expect(split.consumed).toBe(wire.length);
        const out = isText(split.frames[0]!) ? split.frames[0]! : unescapeFrame(split.frames[0]!);
        expect(out.toString('hex')).toBe(expectFacts.frame_decoder_output);
      }

      if (isRefused(f)) {
        checkOutcome(recordedFor(f), observe(() => decode(frameToDecode(wire), session)));
        return;
      }

      // A whole frame on the wire is one frame to our framer.
      const split = splitFrames(wire);
      expect(split.frames).toHaveLength(1);
      expect(split.skipped).toBe(0);
      expect(split.consumed).toBe(wire.length);
      expect(split.frames[0]!.equals(wire)).toBe(true);

      const seen = observe(() => jt808.decode(split.frames[0]!, session));
      checkOutcome(recordedFor(f), seen);
      const decoded = seen.decoded!;
      checkJt808Records(decoded.records);

      if (expectFacts.null) expect(decoded.records).toHaveLength(0);

      const msgId = msgIdOf(wire);
      const helpers = f.traccar_assert_helpers ?? [];
      if (helpers.some((h) => h.startsWith('verifyPosition')) && msgId !== null && LOCATION_MESSAGES.has(msgId)) {
        expect(decoded.records.length).toBeGreaterThan(0);
      }

      for (const [name, value] of Object.entries(expectFacts.attributes ?? {})) checkAttribute(f, decoded, name, value);

      checkPosition(decoded.records[0], expectFacts.position);
      const fields = expectFacts.fields;
      if (fields) {
        const r = decoded.records[0]!;
        if (fields.speed !== undefined) expect(r.speedKmh!).toBeCloseTo(fields.speed * KNOTS_TO_KMH, 1);
        if (fields.course !== undefined) expect(r.headingDeg).toBe(fields.course);
        if (fields.altitude !== undefined) expect(r.altitudeM).toBe(fields.altitude);
      }

      // A report with latched alarm bits gets its 0x8203 confirmation after the typical 0x8001.
      const typical = f.derived?.typical_server_reply_hex;
      if (typeof typical === 'string') {
        const replyFrames = splitFrames(decoded.reply ?? Buffer.alloc(0)).frames.map((x) => x.toString('hex'));
        expect(replyFrames[0]).toBe(typical);
        expect(replyFrames).toHaveLength(latchedInCorpus(f) ? 2 : 1);
      }
    });
  }
});

describe('JT/T 808 refusal policy on the frames with integrity issues', () => {
  const flawed = frames.filter((f) => f.integrity_issues);

  it('covers the 7 flawed frames, all of them refused', () => {
    expect(flawed.map((f) => f.index)).toEqual(frames.filter(isRefused).map((f) => f.index));
    expect(flawed).toHaveLength(7);
  });

  it.each(flawed.map((f) => [f.index, f] as const))('#%i is refused, with a "message error" reply when the header is readable', (_i, f) => {
    const wire = bytesOf(f);
    const err = refusal(() => decode(frameToDecode(wire), sessionFor(f)));
    expect(`refused:${err.code}`).toBe(recordedFor(f).outcome);
    const msgId = msgIdOf(wire);
    const headerReadable = err.code === 'bad_checksum' || err.code === 'bad_length';
    if (!headerReadable || msgId === 0x5501 || msgId === 0x5502) {
      // Nothing to address a reply to, or a vendor message acked otherwise (0x4401).
      expect(err.reply).toBeNull();
      return;
    }
    const nack = unescapeFrame(err.reply!);
    expect(xor8(nack, 1, nack.length - 2)).toBe(nack[nack.length - 2]);
    expect(nack.readUInt16BE(1)).toBe(0x8001);
    const content = unescapeFrame(frameToDecode(wire));
    const serial = content.readUInt16BE(11);
    expect(nack.subarray(-7, -2).toString('hex')).toBe(
      `${serial.toString(16).padStart(4, '0')}${msgId!.toString(16).padStart(4, '0')}02`,
    );
  });

  it('#350 (the one real 0x64 ADAS frame) decodes its alarm label once its check code is repaired', () => {
    const f = frames.find((x) => x.index === 350)!;
    // The corpus holds it de-escaped (a raw 7E inside): take the content, fix the check code, escape it.
    const content = Buffer.from(f.hex, 'hex').subarray(1, -1);
    content[content.length - 1] = xor8(content, 0, content.length - 1);
    const decoded = decode(escapeFrame(content), sessionFor(f));
    const r = decoded.records[0]!;
    expect(r.attributes.adas_alarm_label).toBe(f.expect!.attributes!.alarmLabel);
    // Type 0x04 (pedestrian collision) is no kind of ours; the speed byte matches the corpus note (42 km/h).
    expect(r.attributes.adas_alarm_type).toBe(4);
    expect(r.alarms).toHaveLength(0);
    expect(r.attributes.timezone).toBe('UTC-04:00');
    expect(decoded.announcedTimezoneMinutes).toBe(-240);
  });
});

describe('JT/T 808 identity, registration and time', () => {
  const byIndex = (i: number) => frames.find((f) => f.index === i)!;

  it('rebuilds a 15-digit IMEI from a binary id (#281): the same IMEI the auth code spells out', () => {
    const f = byIndex(281);
    const decoded = decode(bytesOf(f), sessionFor(f));
    const content = unescapeFrame(bytesOf(f));
    const authCode = Buffer.from(content.subarray(13, -2).toString('latin1'), 'base64').toString('latin1');
    expect(decoded.identity).toEqual({ imei: authCode.slice(0, 15) });
  });

  it('strips leading zeros from BCD terminal ids, 2013 and 2019 headers alike', () => {
    for (const f of frames.filter((x) => typeof x.derived?.terminal_id_bcd === 'string' && /^\d+$/.test(String(x.derived.terminal_id_bcd)))) {
      if (isRefused(f)) continue;
      const digits = String(f.derived!.terminal_id_bcd).replace(/^0+/, '');
      const decoded = decode(bytesOf(f), sessionFor(f));
      if (digits === '') expect(decoded.identity).toBeUndefined();
      else expect(decoded.identity?.terminalId).toBe(digits);
    }
  });

  it('refuses an unknown terminal at registration with 0x8100 result 4 and no auth code', () => {
    for (const f of frames.filter((x) => x.derived?.msg_id === '0x0100')) {
      const decoded = decode(bytesOf(f), sessionFor(f));
      const refuse = unescapeFrame(decoded.refuse!);
      expect(refuse.readUInt16BE(1)).toBe(0x8100);
      const content = unescapeFrame(bytesOf(f));
      const serialAt = (content.readUInt16BE(3) & 0x4000) !== 0 ? 16 : 11;
      expect(refuse.subarray(-5, -2).toString('hex')).toBe(`${content.subarray(serialAt, serialAt + 2).toString('hex')}04`);
    }
  });

  it('reads 0x0200 times in GMT+8 by default, in the session zone when one is set', () => {
    for (const f of frames.filter((x) => x.derived?.msg_id === '0x0200' && typeof x.derived.time_bcd_gmt8 === 'string')) {
      if (isRefused(f)) continue;
      const bcd = String(f.derived!.time_bcd_gmt8);
      const [y, mo, d, h, mi, s] = bcd.match(/../g)!.map(Number) as [number, number, number, number, number, number];
      const local = Date.UTC(2000 + y, mo - 1, d, h, mi, s);
      const decoded = decode(bytesOf(f), sessionFor(f));
      const zone = decoded.records[0]!.attributes.timezone;
      if (zone !== undefined) continue; // the frame states its own zone
      expect(decoded.records[0]!.fixTime).toBe(local - 8 * 3_600_000);
      expect(decode(bytesOf(f), sessionFor(f, { timezoneMinutes: 0 })).records[0]!.fixTime).toBe(local);
    }
  });

  it('answers the e-lock BASE,2,TIME request by echoing it with the UTC time (#296)', () => {
    const f = byIndex(296);
    const decoded = decode(bytesOf(f), sessionFor(f));
    expect(decoded.reply!.toString('latin1')).toBe('(794104004140,1,001,BASE,2,20260701120000)');
    expect(decoded.identity).toEqual({ terminalId: '794104004140' });
  });

  it('uses the server serial from the session frame counter', () => {
    const f = byIndex(335);
    const reply = decode(bytesOf(f), sessionFor(f, { frameIndex: 0x1_0005 })).reply!;
    expect(unescapeFrame(reply).readUInt16BE(11)).toBe(5);
  });

  it('names nobody by an all-zero id', () => {
    expect(identityOf(Buffer.alloc(6), 0, 6)).toBeUndefined();
  });
});
