/**
 * Every JT/T 808 corpus frame against our framer and decoder. Facts come from the corpus
 * (what Traccar asserted, in Traccar's names and units), mapped onto ours through the
 * tables below; frames with integrity issues are checked against our refusal policy
 * (README.md: bad check code or body length -> DecodeError with a 0x8001 "message error").
 */
import { describe, expect, it } from 'vitest';
import type { DeviceAlarmKind } from '../../core/alarms.js';
import { xor8 } from '../../gateway/codec/crc.js';
import { DecodeError } from '../../gateway/codec/reader.js';
import type { Decoded, DecodedRecord, SessionInfo } from '../../gateway/protocol.js';
import { decode, identityOf } from '../../gateway/protocols/jt808/decode.js';
import { escapeFrame, splitFrames, unescapeFrame } from '../../gateway/protocols/jt808/frame.js';
import { jt808 } from '../../gateway/protocols/jt808/index.js';
import { KNOTS_TO_KMH, loadFrames, type ConformanceFrame } from '../support/conformance.js';

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
// Refusal policy, derived from the corpus' integrity findings

type RefusalCode = DecodeError['code'];

/**
 * What our policy does with a frame Traccar accepts despite an integrity issue: a raw 7E
 * inside is malformed; content too short for a header is truncated; then the check code is
 * verified before the body length.
 */
function expectedRefusal(f: ConformanceFrame): RefusalCode | null {
  if (!f.integrity_issues) return null;
  const frame = frameToDecode(bytesOf(f));
  if (frame.subarray(1, -1).includes(0x7e)) return 'malformed';
  const content = unescapeFrame(frame);
  if (content.length - 2 < 12 + 1) return 'truncated';
  const issues = JSON.stringify(f.integrity_issues);
  if (issues.includes('checksum')) return 'bad_checksum';
  if (issues.includes('body length')) return 'bad_length';
  throw new Error(`no policy for ${issues}`);
}

/**
 * The frame the decoder is given: the one frame our framer cuts from the wire bytes. A corpus
 * frame that is not one frame on the wire (#350 holds a raw 7E) goes to the decoder whole,
 * as Traccar's decoder test fed it.
 */
function frameToDecode(wire: Buffer): Buffer {
  const split = splitFrames(wire);
  return split.frames.length === 1 ? split.frames[0]! : wire;
}

function refusal(fn: () => unknown): DecodeError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DecodeError) return err;
    throw err;
  }
  throw new Error('expected a DecodeError');
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

function checkRecordsSane(records: DecodedRecord[]): void {
  for (const r of records) {
    expect(Number.isFinite(r.fixTime)).toBe(true);
    if (r.lat !== null) expect(Math.abs(r.lat)).toBeLessThanOrEqual(90);
    if (r.lng !== null) expect(Math.abs(r.lng)).toBeLessThanOrEqual(180);
    expect(r.raw.length).toBeGreaterThanOrEqual(28);
  }
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

      const refused = expectedRefusal(f);
      if (refused !== null) {
        const err = refusal(() => decode(frameToDecode(wire), session));
        expect(err.code).toBe(refused);
        return;
      }

      // A whole frame on the wire is one frame to our framer.
      const split = splitFrames(wire);
      expect(split.frames).toHaveLength(1);
      expect(split.skipped).toBe(0);
      expect(split.consumed).toBe(wire.length);
      expect(split.frames[0]!.equals(wire)).toBe(true);

      const decoded = jt808.decode(split.frames[0]!, session);
      checkRecordsSane(decoded.records);

      if (expectFacts.null) expect(decoded.records).toHaveLength(0);

      const msgId = msgIdOf(wire);
      const helpers = f.traccar_assert_helpers ?? [];
      if (helpers.some((h) => h.startsWith('verifyPosition')) && msgId !== null && LOCATION_MESSAGES.has(msgId)) {
        expect(decoded.records.length).toBeGreaterThan(0);
      }
      if (decoded.records.length === 0 && !expectFacts.null) {
        // Traccar made something of it; we document why we did not.
        expect(decoded.ignoredReason ?? (decoded.reply !== null ? 'acknowledged' : undefined)).toBeDefined();
      }

      for (const [name, value] of Object.entries(expectFacts.attributes ?? {})) checkAttribute(f, decoded, name, value);

      const position = expectFacts.position;
      if (position) {
        const r = decoded.records[0]!;
        if (position.time !== undefined) expect(r.fixTime).toBe(Date.parse(position.time));
        if (position.valid !== undefined) expect(r.valid).toBe(position.valid);
        if (position.lat !== undefined) expect(r.lat!).toBeCloseTo(position.lat, 5);
        if (position.lon !== undefined) expect(r.lng!).toBeCloseTo(position.lon, 5);
      }
      const fields = expectFacts.fields;
      if (fields) {
        const r = decoded.records[0]!;
        if (fields.speed !== undefined) expect(r.speedKmh!).toBeCloseTo(fields.speed * KNOTS_TO_KMH, 1);
        if (fields.course !== undefined) expect(r.headingDeg).toBe(fields.course);
        if (fields.altitude !== undefined) expect(r.altitudeM).toBe(fields.altitude);
      }

      const typical = f.derived?.typical_server_reply_hex;
      if (typeof typical === 'string') expect(decoded.reply?.toString('hex')).toBe(typical);
    });
  }
});

describe('JT/T 808 refusal policy on the frames with integrity issues', () => {
  const flawed = frames.filter((f) => f.integrity_issues);

  it('covers the 7 flawed frames', () => {
    expect(flawed).toHaveLength(7);
  });

  it.each(flawed.map((f) => [f.index, f] as const))('#%i is refused, with a "message error" reply when the header is readable', (_i, f) => {
    const wire = bytesOf(f);
    const err = refusal(() => decode(frameToDecode(wire), sessionFor(f)));
    expect(err.code).toBe(expectedRefusal(f));
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
      if (expectedRefusal(f) !== null) continue;
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
      if (expectedRefusal(f) !== null) continue;
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
